#include "worker/tokenizer/spm_tokenizer.h"

#include <climits>
#include <cmath>
#include <queue>
#include <utility>

#include "worker/tokenizer/special_spellings.h"

namespace smallmind::worker {

namespace {

constexpr std::string_view kSpmSpace = "\xE2\x96\x81";  // U+2581 '▁'

std::string NormaliseSpaces(std::string piece) {
  size_t pos = piece.find(kSpmSpace);
  if (pos == std::string::npos) return piece;
  std::string out;
  out.reserve(piece.size());
  size_t start = 0;
  for (; pos != std::string::npos; pos = piece.find(kSpmSpace, start)) {
    out.append(piece, start, pos - start);
    out.push_back(' ');
    start = pos + kSpmSpace.size();
  }
  out.append(piece, start, std::string::npos);
  return out;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// "<0xHH>" -> HH, else -1.
int ParseBytePiece(std::string_view piece) {
  if (piece.size() != 6 || piece.substr(0, 3) != "<0x" || piece[5] != '>') return -1;
  int hi = HexDigit(piece[3]);
  int lo = HexDigit(piece[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

bool IsValidType(SpmTokenType t) {
  int v = static_cast<int>(t);
  return v >= static_cast<int>(SpmTokenType::kNormal) && v <= static_cast<int>(SpmTokenType::kByte);
}

bool IsContinuationByte(char c) { return (static_cast<uint8_t>(c) & 0xC0) == 0x80; }

// A vocabulary's sizes agree and its special ids lie in it (Create's first checks).
shared::Status CheckVocabShape(const SpmVocab& vocab) {
  const size_t n = vocab.pieces.size();
  if (n == 0) return shared::InvalidArgument("tokenizer vocabulary is empty");
  if (n > static_cast<size_t>(INT32_MAX)) {
    return shared::InvalidArgument("tokenizer vocabulary has too many tokens");
  }
  if (vocab.scores.size() != n || vocab.types.size() != n) {
    return shared::InvalidArgument("tokenizer vocabulary has " + std::to_string(n) +
                                   " pieces but " + std::to_string(vocab.scores.size()) +
                                   " scores and " + std::to_string(vocab.types.size()) +
                                   " token types");
  }
  for (TokenId special : {vocab.bos_id, vocab.eos_id, vocab.unk_id, vocab.eot_id}) {
    if (special < -1 || special >= static_cast<TokenId>(n)) {
      return shared::InvalidArgument("tokenizer special token id " + std::to_string(special) +
                                     " is outside the vocabulary of " + std::to_string(n));
    }
  }
  return shared::Status::Ok();
}

}  // namespace

// One node of the doubly linked symbol list. Symbols keep their input order; a merge grows the
// left symbol over the right one and marks the right one dead (len 0).
struct SpmTokenizer::Symbol {
  int start;  // byte offset into the encoded input
  int len;    // bytes covered; 0 once merged away
  TokenId id;
  int prev;        // index of the previous live symbol, -1 at the front
  int next;        // index of the next live symbol, -1 at the back
  bool mergeable;  // false for byte-fallback and unknown symbols
};

shared::Result<std::unique_ptr<SpmTokenizer>> SpmTokenizer::Create(SpmVocab vocab,
                                                                   TokenizerKind kind) {
  SM_RETURN_IF_ERROR(CheckVocabShape(vocab));
  const size_t n = vocab.pieces.size();
  std::unique_ptr<SpmTokenizer> tok(new SpmTokenizer());
  tok->kind_ = kind;
  tok->byte_token_.fill(-1);
  tok->byte_value_.assign(n, 0);
  tok->lookup_.reserve(n);
  tok->eot_id_ = ApplySpecialSpellings(vocab.pieces, &vocab.types, vocab.eot_id);
  for (size_t i = 0; i < n; ++i) {
    auto where = [i] { return "tokenizer token " + std::to_string(i); };
    if (std::isnan(vocab.scores[i])) return shared::InvalidArgument(where() + " has a NaN score");
    const SpmTokenType type = vocab.types[i];
    if (!IsValidType(type)) {
      return shared::InvalidArgument(where() + " has unknown type " +
                                     std::to_string(static_cast<int>(type)));
    }
    const TokenId id = static_cast<TokenId>(i);
    if (type == SpmTokenType::kControl || type == SpmTokenType::kUserDefined) {
      tok->special_.Add(vocab.pieces[i], id);
    }
    if (type == SpmTokenType::kUserDefined) tok->added_.Add(vocab.pieces[i], id);
    vocab.pieces[i] = NormaliseSpaces(std::move(vocab.pieces[i]));
    const std::string& piece = vocab.pieces[i];
    if (type == SpmTokenType::kByte) {
      int b = ParseBytePiece(piece);
      if (b < 0)
        return shared::InvalidArgument(where() + " is a byte token but not spelled <0xHH>");
      tok->byte_value_[i] = static_cast<uint8_t>(b);
      if (tok->byte_token_[b] < 0) tok->byte_token_[b] = id;
    } else if ((type == SpmTokenType::kNormal || type == SpmTokenType::kUserDefined) &&
               !piece.empty()) {
      tok->lookup_.emplace(piece, id);  // the lowest id keeps a duplicate
    }
  }
  tok->pieces_ = std::move(vocab.pieces);
  tok->scores_ = std::move(vocab.scores);
  tok->types_ = std::move(vocab.types);
  tok->bos_id_ = vocab.bos_id;
  tok->eos_id_ = vocab.eos_id;
  tok->unk_id_ = vocab.unk_id;
  tok->add_bos_ = vocab.add_bos && vocab.bos_id >= 0;
  tok->add_space_prefix_ = vocab.add_space_prefix;
  return tok;
}

TokenId SpmTokenizer::Lookup(std::string_view text) const {
  auto it = lookup_.find(text);
  return it == lookup_.end() ? -1 : it->second;
}

// run.c's grouping: a byte plus the continuation bytes after it, at most 4 bytes, whether or not
// that is valid UTF-8. A group that is a piece becomes one symbol; otherwise each byte becomes its
// byte token (or, in a vocabulary without byte tokens, the group becomes one unknown symbol).
void SpmTokenizer::SplitCodePoints(std::string_view input, std::vector<Symbol>* symbols) const {
  const int n = static_cast<int>(input.size());
  int i = 0;
  while (i < n) {
    int len = 1;
    while (i + len < n && len < 4 && IsContinuationByte(input[i + len])) ++len;
    TokenId id = Lookup(input.substr(i, len));
    if (id >= 0) {
      symbols->push_back({i, len, id, -1, -1, true});
    } else {
      bool all_bytes = true;
      for (int k = 0; k < len; ++k) {
        all_bytes = all_bytes && byte_token_[static_cast<uint8_t>(input[i + k])] >= 0;
      }
      if (all_bytes) {
        for (int k = 0; k < len; ++k) {
          symbols->push_back(
              {i + k, 1, byte_token_[static_cast<uint8_t>(input[i + k])], -1, -1, false});
        }
      } else if (unk_id_ >= 0) {
        symbols->push_back({i, len, unk_id_, -1, -1, false});
      }
    }
    i += len;
  }
  const int count = static_cast<int>(symbols->size());
  for (int s = 0; s < count; ++s) {
    (*symbols)[s].prev = s - 1;
    (*symbols)[s].next = s + 1 < count ? s + 1 : -1;
  }
}

// Equivalent to run.c's loop "merge the best pair, rescan" because the heap always holds every
// adjacent mergeable pair of the current list (stale entries are skipped when popped) and orders
// them by (score desc, left symbol index asc); symbol indices follow text order, so the smallest
// index is the leftmost pair. A merged symbol covers the bytes of both, so a pair's text is always
// the input slice [left.start, left.start + left.len + right.len).
void SpmTokenizer::MergeSymbols(std::string_view input, std::vector<Symbol>* symbols) const {
  struct Candidate {
    float score;
    int left;
    int right;
    int len;  // left.len + right.len when pushed; a mismatch later means the entry is stale
    TokenId id;
  };
  auto lower = [](const Candidate& a, const Candidate& b) {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  };
  std::vector<Candidate> storage;
  storage.reserve(symbols->size());
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(lower)> heap(lower,
                                                                               std::move(storage));
  std::vector<Symbol>& sym = *symbols;
  auto try_push = [&](int left, int right) {
    if (left < 0 || right < 0 || !sym[left].mergeable || !sym[right].mergeable) return;
    const int len = sym[left].len + sym[right].len;
    TokenId id = Lookup(input.substr(sym[left].start, len));
    if (id >= 0) heap.push({scores_[id], left, right, len, id});
  };
  for (int s = 0; s + 1 < static_cast<int>(sym.size()); ++s) try_push(s, s + 1);

  while (!heap.empty()) {
    Candidate c = heap.top();
    heap.pop();
    Symbol& left = sym[c.left];
    Symbol& right = sym[c.right];
    if (left.len == 0 || right.len == 0 || left.next != c.right || left.len + right.len != c.len) {
      continue;  // one side has merged since this entry was pushed
    }
    left.len = c.len;
    left.id = c.id;
    left.next = right.next;
    if (right.next >= 0) sym[right.next].prev = c.left;
    right.len = 0;
    try_push(left.prev, c.left);
    try_push(c.left, left.next);
  }
}

std::vector<TokenId> SpmTokenizer::Encode(std::string_view text, bool add_bos) const {
  std::vector<TokenId> out;
  if (add_bos && bos_id_ >= 0) out.push_back(bos_id_);
  // Symbol offsets are int; requests are capped far below this by the gRPC message limit.
  SM_CHECK(text.size() < static_cast<size_t>(INT32_MAX)) << "text of " << text.size() << " bytes";
  if (added_.empty()) {
    EncodeRun(text, &out);
    return out;
  }
  std::vector<AddedTokenMatcher::Segment> segments;
  added_.Partition(text, &segments);
  for (const AddedTokenMatcher::Segment& segment : segments) {
    if (segment.id >= 0) {
      out.push_back(segment.id);
    } else {
      EncodeRun(segment.text, &out);
    }
  }
  return out;
}

void SpmTokenizer::EncodeRun(std::string_view text, std::vector<TokenId>* out) const {
  if (text.empty()) return;
  std::string input;
  input.reserve(text.size() + 1);
  if (add_space_prefix_) input.push_back(' ');
  input.append(text);

  std::vector<Symbol> symbols;
  symbols.reserve(input.size());
  SplitCodePoints(input, &symbols);
  MergeSymbols(input, &symbols);
  out->reserve(out->size() + symbols.size());
  for (int s = symbols.empty() ? -1 : 0; s >= 0; s = symbols[s].next) out->push_back(symbols[s].id);
}

void SpmTokenizer::AppendTokenBytes(TokenId prev, TokenId id, std::string* out) const {
  if (id < 0 || id >= vocab_size()) return;
  switch (types_[id]) {
    case SpmTokenType::kByte: out->push_back(static_cast<char>(byte_value_[id])); return;
    case SpmTokenType::kControl:
    case SpmTokenType::kUnused: return;
    default: break;
  }
  std::string_view piece = pieces_[id];
  if (add_space_prefix_ && prev >= 0 && prev == bos_id_ && !piece.empty() && piece.front() == ' ') {
    piece.remove_prefix(1);
  }
  out->append(piece);
}

std::string_view SpmTokenizer::Piece(TokenId id) const {
  if (id < 0 || id >= vocab_size()) return {};
  return pieces_[id];
}

}  // namespace smallmind::worker
