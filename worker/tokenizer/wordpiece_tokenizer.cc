#include "worker/tokenizer/wordpiece_tokenizer.h"

#include <algorithm>

namespace smallmind::worker {

namespace {

constexpr std::string_view kWordStart = "\xE2\x96\x81";  // U+2581, GGUF's mark of a word's start

}  // namespace

shared::Result<std::unique_ptr<WordPieceTokenizer>> WordPieceTokenizer::Create(
    WordPieceVocab vocab) {
  const size_t n = vocab.tokens.size();
  if (n == 0) return shared::InvalidArgument("tokenizer vocabulary is empty");
  if (n >= static_cast<size_t>(INT32_MAX)) {
    return shared::InvalidArgument("tokenizer vocabulary has too many tokens");
  }
  if (vocab.unk_id < 0) {
    return shared::InvalidArgument("a WordPiece vocabulary needs an unknown token ([UNK])");
  }
  for (TokenId special :
       {vocab.unk_id, vocab.cls_id, vocab.sep_id, vocab.pad_id, vocab.mask_id, vocab.eos_id}) {
    if (special < -1 || special >= static_cast<TokenId>(n)) {
      return shared::InvalidArgument("tokenizer special token id " + std::to_string(special) +
                                     " is outside the vocabulary of " + std::to_string(n));
    }
  }
  std::unique_ptr<WordPieceTokenizer> tok(new WordPieceTokenizer());
  tok->lookup_.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    // The first of two equal spellings keeps it, as in llama.cpp's token_to_id.
    tok->lookup_.emplace(vocab.tokens[i], static_cast<TokenId>(i));
    tok->max_piece_bytes_ = std::max(tok->max_piece_bytes_, vocab.tokens[i].size());
  }
  tok->tokens_ = std::move(vocab.tokens);
  tok->unk_id_ = vocab.unk_id;
  tok->cls_id_ = vocab.cls_id;
  tok->sep_id_ = vocab.sep_id;
  tok->pad_id_ = vocab.pad_id;
  tok->mask_id_ = vocab.mask_id;
  tok->pair_format_ = RerankPairFormat{vocab.cls_id,  vocab.eos_id,  vocab.sep_id,
                                       vocab.add_bos, vocab.add_eos, vocab.add_sep};
  return tok;
}

void WordPieceTokenizer::EncodeWord(std::string_view word, std::vector<TokenId>* out) const {
  const size_t start = out->size();
  for (size_t i = 0; i < word.size();) {
    size_t j = std::min(word.size(), i + max_piece_bytes_);
    for (; j > i; --j) {
      const auto it = lookup_.find(word.substr(i, j - i));
      if (it == lookup_.end()) continue;
      out->push_back(it->second);
      break;
    }
    if (j == i) {  // some part matches nothing: the whole word is unknown
      out->resize(start);
      break;
    }
    i = j;
  }
  if (out->size() == start) out->push_back(unk_id_);
}

std::vector<TokenId> WordPieceTokenizer::Encode(std::string_view text, bool add_bos) const {
  std::vector<TokenId> ids;
  if (add_bos && cls_id_ >= 0) ids.push_back(cls_id_);
  std::string word;
  for (const std::string& w : BertWords(text)) {
    word.assign(kWordStart);
    word += w;
    EncodeWord(word, &ids);
  }
  if (add_bos && sep_id_ >= 0) ids.push_back(sep_id_);
  return ids;
}

bool WordPieceTokenizer::IsSilent(TokenId id) const {
  return id == cls_id_ || id == sep_id_ || id == pad_id_ || id == mask_id_;
}

void WordPieceTokenizer::AppendTokenBytes(TokenId prev, TokenId id, std::string* out) const {
  if (id < 0 || id >= vocab_size() || IsSilent(id)) return;
  std::string_view piece = tokens_[id];
  const bool word_start = piece.substr(0, kWordStart.size()) == kWordStart;
  if (word_start) piece.remove_prefix(kWordStart.size());
  // [UNK] stands for a whole word.
  if ((word_start || id == unk_id_) && prev >= 0 && prev != cls_id_) out->push_back(' ');
  out->append(piece);
}

std::string_view WordPieceTokenizer::Piece(TokenId id) const {
  if (id < 0 || id >= vocab_size()) return {};
  return tokens_[id];
}

}  // namespace smallmind::worker
