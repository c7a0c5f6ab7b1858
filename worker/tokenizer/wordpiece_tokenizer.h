// WordPieceTokenizer: BERT's WordPiece (GGUF tokenizer.ggml.model = bert), encoding as Hugging
// Face's BertNormalizer + BertPreTokenizer + WordPiece do for uncased models (bge, MiniLM,
// nomic-embed) and as llama.cpp's WPM tokenizer does: text is cleaned (NUL, U+FFFD and control
// characters dropped), accents stripped (NFD, combining marks dropped), lower-cased and split at
// whitespace, at every punctuation character and around every CJK ideograph; each word becomes the
// longest vocabulary pieces from its start, greedily, or one [UNK] when some part of it matches
// nothing. The GGUF vocabulary marks a word-initial piece with U+2581 ("▁hello") and stores a
// continuation ("##llo" in the Hugging Face vocabulary) bare ("llo"). Built once by a loader;
// immutable afterwards, so every method is const and thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "shared/status.h"
#include "worker/tokenizer/tokenizer.h"

namespace smallmind::worker {

// A vocabulary as a loader reads it (GGUF spellings).
struct WordPieceVocab {
  std::vector<std::string> tokens;  // [n_vocab]
  TokenId unk_id = -1;              // [UNK]; required
  TokenId cls_id = -1;              // [CLS]: starts an encoded input (BOS); -1 when none
  TokenId sep_id = -1;              // [SEP]: ends an encoded input; -1 when none
  TokenId pad_id = -1;              // [PAD]; -1 when none
  TokenId mask_id = -1;             // [MASK]; -1 when none
  // For a reranker's query-document pairs (rerank_pair.h), as llama.cpp reads a bert vocabulary:
  TokenId eos_id = -1;   // tokenizer.ggml.eos_token_id; -1 (llama.cpp's default) when absent
  bool add_bos = true;   // tokenizer.ggml.add_bos_token
  bool add_eos = false;  // tokenizer.ggml.add_eos_token
  bool add_sep = true;   // tokenizer.ggml.add_sep_token
};

class WordPieceTokenizer final : public Tokenizer {
 public:
  // Validates `vocab` (tokens not empty, [UNK] given, every special id inside the vocabulary) and
  // returns InvalidArgument naming the first problem.
  static shared::Result<std::unique_ptr<WordPieceTokenizer>> Create(WordPieceVocab vocab);

  TokenizerKind kind() const override { return TokenizerKind::kWordPiece; }
  int vocab_size() const override { return static_cast<int>(tokens_.size()); }
  TokenId bos_id() const override { return cls_id_; }
  // [SEP] ends an input, not a generation: an encoder generates nothing.
  TokenId eos_id() const override { return -1; }
  bool add_bos_default() const override { return cls_id_ >= 0; }
  TokenId sep_id() const { return sep_id_; }
  TokenId unk_id() const { return unk_id_; }
  std::optional<RerankPairFormat> rerank_pair_format() const override { return pair_format_; }

  // The words' pieces; with add_bos, [CLS] before them and [SEP] after (each when the vocabulary
  // has it), the input shape BERT encoders are trained on.
  std::vector<TokenId> Encode(std::string_view text, bool add_bos) const override;
  // A word-initial piece gives " " and its text (no space at the start of the text or after
  // [CLS]), a continuation its text, [UNK] a word of its spelling, [CLS]/[SEP]/[PAD]/[MASK]
  // nothing.
  void AppendTokenBytes(TokenId prev, TokenId id, std::string* out) const override;
  std::string_view Piece(TokenId id) const override;

 private:
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  WordPieceTokenizer() = default;
  // Appends word's pieces (word is "▁" + its normalised text), or [UNK] when it has none.
  void EncodeWord(std::string_view word, std::vector<TokenId>* out) const;
  bool IsSilent(TokenId id) const;

  std::vector<std::string> tokens_;
  std::unordered_map<std::string, TokenId, StringHash, std::equal_to<>> lookup_;
  size_t max_piece_bytes_ = 0;
  TokenId unk_id_ = -1;
  TokenId cls_id_ = -1;
  TokenId sep_id_ = -1;
  TokenId pad_id_ = -1;
  TokenId mask_id_ = -1;
  RerankPairFormat pair_format_;
};

// BERT's normalisation and pre-tokenization of `text` (see WordPieceTokenizer): the words, each
// lower-cased, accent-stripped and NFD. Invalid UTF-8 bytes are dropped (read as U+FFFD).
std::vector<std::string> BertWords(std::string_view text);

}  // namespace smallmind::worker
