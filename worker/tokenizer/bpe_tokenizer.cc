#include "worker/tokenizer/bpe_tokenizer.h"

#include <climits>
#include <functional>
#include <queue>
#include <utility>

#include "worker/tokenizer/special_spellings.h"

namespace smallmind::worker {

namespace {

bool IsValidType(SpmTokenType t) {
  const int v = static_cast<int>(t);
  return v >= static_cast<int>(SpmTokenType::kNormal) && v <= static_cast<int>(SpmTokenType::kByte);
}

uint64_t PairKey(TokenId left, TokenId right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

}  // namespace

// One node of the doubly linked symbol list of a piece; symbols keep their byte order. A merge
// turns the left symbol into the merged token and kills the right one (id -1).
struct BpeTokenizer::Symbol {
  TokenId id;
  int prev;  // index of the previous live symbol, -1 at the front
  int next;  // index of the next live symbol, -1 at the back
};

shared::Result<std::unique_ptr<BpeTokenizer>> BpeTokenizer::Create(BpeVocab vocab) {
  const size_t n = vocab.tokens.size();
  if (n == 0) return shared::InvalidArgument("tokenizer vocabulary is empty");
  if (n >= static_cast<size_t>(INT32_MAX)) {
    return shared::InvalidArgument("tokenizer vocabulary has too many tokens");
  }
  if (vocab.types.empty()) vocab.types.assign(n, SpmTokenType::kNormal);
  if (vocab.types.size() != n) {
    return shared::InvalidArgument("tokenizer vocabulary has " + std::to_string(n) +
                                   " tokens but " + std::to_string(vocab.types.size()) +
                                   " token types");
  }
  for (TokenId special : {vocab.bos_id, vocab.eos_id, vocab.eot_id}) {
    if (special < -1 || special >= static_cast<TokenId>(n)) {
      return shared::InvalidArgument("tokenizer special token id " + std::to_string(special) +
                                     " is outside the vocabulary of " + std::to_string(n));
    }
  }
  std::unique_ptr<BpeTokenizer> tok(new BpeTokenizer());
  vocab.eot_id = ApplySpecialSpellings(vocab.tokens, &vocab.types, vocab.eot_id);
  SM_RETURN_IF_ERROR(tok->BuildLookups(vocab));
  SM_RETURN_IF_ERROR(tok->BuildMerges(vocab.merges));
  auto pre = PreTokenizer::Create(vocab.pre.patterns);
  if (!pre.ok()) return pre.status();
  tok->pre_ = std::move(pre).value();
  tok->tokens_ = std::move(vocab.tokens);
  tok->types_ = std::move(vocab.types);
  tok->pre_name_ = vocab.pre.name;
  tok->ignore_merges_ = vocab.pre.ignore_merges;
  tok->bos_id_ = vocab.bos_id;
  tok->eos_id_ = vocab.eos_id;
  tok->eot_id_ = vocab.eot_id;
  tok->add_bos_ = vocab.add_bos && vocab.bos_id >= 0;
  tok->add_eos_ = vocab.add_eos && vocab.eos_id >= 0;
  tok->BuildDecodedBytes();
  return tok;
}

shared::Status BpeTokenizer::BuildLookups(const BpeVocab& vocab) {
  const size_t n = vocab.tokens.size();
  lookup_.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const SpmTokenType type = vocab.types[i];
    if (!IsValidType(type)) {
      return shared::InvalidArgument("tokenizer token " + std::to_string(i) + " has unknown type " +
                                     std::to_string(static_cast<int>(type)));
    }
    const TokenId id = static_cast<TokenId>(i);
    if (type == SpmTokenType::kControl || type == SpmTokenType::kUserDefined) {
      special_.Add(vocab.tokens[i], id);
    }
    if (type == SpmTokenType::kControl || vocab.tokens[i].empty()) continue;
    lookup_.emplace(vocab.tokens[i], id);
    if (type == SpmTokenType::kUserDefined) added_.Add(vocab.tokens[i], id);
  }
  std::string spelling;
  for (int b = 0; b < 256; ++b) {
    spelling.clear();
    const char byte = static_cast<char>(b);
    byte_map_.AppendEncoded(std::string_view(&byte, 1), &spelling);
    byte_token_[b] = Lookup(spelling);
  }
  return shared::Status::Ok();
}

shared::Status BpeTokenizer::BuildMerges(const std::vector<std::string>& merges) {
  if (merges.size() >= static_cast<size_t>(INT32_MAX)) {
    return shared::InvalidArgument("tokenizer has too many merges");
  }
  merges_.reserve(merges.size());
  std::string joined;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const std::string& m = merges[rank];
    // The separator is the first space after the first byte, so a left half may be " ".
    const size_t space = m.size() < 2 ? std::string::npos : m.find(' ', 1);
    if (space == std::string::npos || space + 1 == m.size()) {
      return shared::InvalidArgument("tokenizer merge " + std::to_string(rank) + " '" + m +
                                     "' is not two tokens separated by a space");
    }
    const std::string_view left(m.data(), space);
    const std::string_view right(m.data() + space + 1, m.size() - space - 1);
    joined.assign(left).append(right);
    const TokenId l = Lookup(left);
    const TokenId r = Lookup(right);
    const TokenId result = Lookup(joined);
    if (l < 0 || r < 0 || result < 0) continue;  // never applies: its symbols cannot exist
    merges_.try_emplace(PairKey(l, r), Merge{static_cast<int32_t>(rank), result});
  }
  return shared::Status::Ok();
}

void BpeTokenizer::BuildDecodedBytes() {
  decoded_offset_.reserve(tokens_.size() + 1);
  for (size_t i = 0; i < tokens_.size(); ++i) {
    decoded_offset_.push_back(static_cast<uint32_t>(decoded_.size()));
    switch (types_[i]) {
      case SpmTokenType::kControl:
      case SpmTokenType::kUnused: break;
      case SpmTokenType::kUserDefined: decoded_.append(tokens_[i]); break;
      default: byte_map_.AppendDecoded(tokens_[i], &decoded_); break;
    }
    SM_CHECK(decoded_.size() < UINT32_MAX) << "decoded vocabulary past 4 GiB";
  }
  decoded_offset_.push_back(static_cast<uint32_t>(decoded_.size()));
}

TokenId BpeTokenizer::Lookup(std::string_view spelling) const {
  auto it = lookup_.find(spelling);
  return it == lookup_.end() ? -1 : it->second;
}

const BpeTokenizer::Merge* BpeTokenizer::FindMerge(TokenId left, TokenId right) const {
  auto it = merges_.find(PairKey(left, right));
  return it == merges_.end() ? nullptr : &it->second;
}

// Equivalent to "apply the lowest-ranked merge among adjacent pairs (leftmost on ties), repeat":
// the heap holds every adjacent pair that has a merge (stale entries are skipped when popped) and
// orders them by (rank, left index); indices follow byte order, so the smallest is leftmost.
void BpeTokenizer::MergeSymbols(std::vector<Symbol>* symbols) const {
  struct Candidate {
    int32_t rank;
    int left;
    int right;
    TokenId left_id;  // the pair's ids when pushed; a mismatch later means the entry is stale
    TokenId right_id;
    TokenId result;
  };
  auto later = [](const Candidate& a, const Candidate& b) {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  };
  std::vector<Candidate> storage;
  storage.reserve(symbols->size());
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(later)> heap(later,
                                                                               std::move(storage));
  std::vector<Symbol>& sym = *symbols;
  auto try_push = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const Merge* m = FindMerge(sym[left].id, sym[right].id);
    if (m != nullptr) heap.push({m->rank, left, right, sym[left].id, sym[right].id, m->result});
  };
  for (int s = 0; s + 1 < static_cast<int>(sym.size()); ++s) try_push(s, s + 1);

  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    Symbol& left = sym[c.left];
    Symbol& right = sym[c.right];
    if (left.id != c.left_id || right.id != c.right_id || left.next != c.right) continue;
    left.id = c.result;
    left.next = right.next;
    if (right.next >= 0) sym[right.next].prev = c.left;
    right.id = -1;
    try_push(left.prev, c.left);
    try_push(c.left, left.next);
  }
}

void BpeTokenizer::EncodePiece(std::string_view piece, std::vector<Symbol>* symbols,
                               std::string* scratch, std::vector<TokenId>* out) const {
  if (ignore_merges_) {
    scratch->clear();
    byte_map_.AppendEncoded(piece, scratch);
    const TokenId whole = Lookup(*scratch);
    if (whole >= 0) {
      out->push_back(whole);
      return;
    }
  }
  symbols->clear();
  for (char c : piece) {
    const TokenId id = byte_token_[static_cast<uint8_t>(c)];
    if (id < 0) continue;
    const int index = static_cast<int>(symbols->size());
    symbols->push_back({id, index - 1, -1});
    if (index > 0) (*symbols)[index - 1].next = index;
  }
  MergeSymbols(symbols);
  for (int s = symbols->empty() ? -1 : 0; s >= 0; s = (*symbols)[s].next) {
    out->push_back((*symbols)[s].id);
  }
}

std::vector<TokenId> BpeTokenizer::Encode(std::string_view text, bool add_bos) const {
  std::vector<TokenId> out;
  if (add_bos && bos_id_ >= 0) out.push_back(bos_id_);
  // Symbol indices are int; requests are capped far below this by the gRPC message limit.
  SM_CHECK(text.size() < static_cast<size_t>(INT32_MAX)) << "text of " << text.size() << " bytes";
  std::vector<AddedTokenMatcher::Segment> segments;
  added_.Partition(text, &segments);
  std::vector<std::string_view> pieces;
  std::vector<Symbol> symbols;
  std::string scratch;
  for (const AddedTokenMatcher::Segment& segment : segments) {
    if (segment.id >= 0) {
      out.push_back(segment.id);
      continue;
    }
    pieces.clear();
    pre_->Split(segment.text, &pieces);
    for (std::string_view piece : pieces) EncodePiece(piece, &symbols, &scratch, &out);
  }
  return out;
}

void BpeTokenizer::AppendTokenBytes(TokenId prev, TokenId id, std::string* out) const {
  if (id < 0 || id >= vocab_size()) return;
  const uint32_t begin = decoded_offset_[id];
  out->append(decoded_, begin, decoded_offset_[id + 1] - begin);
}

std::string_view BpeTokenizer::Piece(TokenId id) const {
  if (id < 0 || id >= vocab_size()) return {};
  return tokens_[id];
}

}  // namespace smallmind::worker
