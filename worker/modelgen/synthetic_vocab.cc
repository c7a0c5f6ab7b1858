#include "worker/modelgen/synthetic_vocab.h"

#include <algorithm>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace smallmind::worker {
namespace {

// English letters from most to least frequent: earlier letters make earlier (higher-scored) pieces.
constexpr std::string_view kLetters = "etaoinshrdlcumwfgypbvkjxqz";
constexpr std::string_view kOtherChars = "0123456789.,!?'\"-:;()";
// Frequent words of simple English prose, in rough frequency order.
constexpr std::string_view kWords[] = {
    "the",   "and",   "to",    "a",      "was",  "he",     "she",   "it",     "of",     "in",
    "they",  "her",   "his",   "you",    "said", "with",   "day",   "one",    "that",   "on",
    "big",   "for",   "but",   "so",     "time", "little", "upon",  "once",   "there",  "had",
    "is",    "very",  "happy", "friend", "play", "saw",    "named", "wanted", "loved",  "went",
    "mom",   "not",   "all",   "we",     "at",   "were",   "be",    "what",   "like",   "could",
    "would", "help",  "tree",  "ball",   "girl", "boy",    "dog",   "cat",    "park",   "from",
    "them",  "then",  "when",  "did",    "see",  "new",    "good",  "look",   "came",   "out",
    "up",    "about", "are",   "can",    "have", "this",   "asked", "found",  "smiled", "sun",
};

constexpr char kHex[] = "0123456789ABCDEF";

// The vocabulary being built: pieces in id order, no duplicates, at most `limit`.
class Accumulator {
 public:
  explicit Accumulator(int limit) : limit_(limit) {}
  bool full() const { return static_cast<int>(vocab_.pieces.size()) >= limit_; }
  bool Has(const std::string& piece) const { return seen_.count(piece) > 0; }
  void Add(std::string piece, SpmTokenType type) {
    if (full() || !seen_.insert(piece).second) return;
    const bool normal = type == SpmTokenType::kNormal;
    vocab_.scores.push_back(normal ? -static_cast<float>(normal_count_++) : 0.0f);
    vocab_.pieces.push_back(std::move(piece));
    vocab_.types.push_back(type);
  }
  SpmVocab Take() { return std::move(vocab_); }

 private:
  int limit_;
  int normal_count_ = 0;
  SpmVocab vocab_;
  std::unordered_set<std::string> seen_;
};

// Visits every string of `length` lowercase letters in order of the sum of their frequency ranks
// (then lexicographically by rank), until `visit` returns false. Returns false when stopped.
bool ForEachLetterTuple(int length, const std::function<bool(const std::string&)>& visit) {
  const int max_rank = static_cast<int>(kLetters.size()) - 1;
  std::string s(static_cast<size_t>(length), ' ');
  // Fills positions [i, length) with ranks summing to `left`.
  std::function<bool(int, int)> fill = [&](int i, int left) {
    if (i == length - 1) {
      if (left > max_rank) return true;
      s[i] = kLetters[left];
      return visit(s);
    }
    for (int r = 0; r <= std::min(left, max_rank); r++) {
      s[i] = kLetters[r];
      if (!fill(i + 1, left - r)) return false;
    }
    return true;
  };
  for (int sum = 0; sum <= length * max_rank; sum++) {
    if (!fill(0, sum)) return false;
  }
  return true;
}

void AddSpecialsAndBytes(Accumulator* acc) {
  acc->Add("<unk>", SpmTokenType::kUnknown);
  acc->Add("<s>", SpmTokenType::kControl);
  acc->Add("</s>", SpmTokenType::kControl);
  for (int b = 0; b < 256; b++) {
    acc->Add(std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">", SpmTokenType::kByte);
  }
}

std::string Upper(char ch) { return std::string(1, static_cast<char>(ch - 'a' + 'A')); }

// " " + s (spelled out: GCC 12 warns falsely on `" " + std::string`).
std::string Spaced(std::string_view s) {
  std::string out(1, ' ');
  out += s;
  return out;
}

void AddNormalPieces(Accumulator* acc) {
  const auto add = [acc](std::string piece) { acc->Add(std::move(piece), SpmTokenType::kNormal); };
  add(" ");
  for (char ch : kLetters) add(std::string(1, ch));
  for (char ch : kLetters) add(Upper(ch));
  for (char ch : kOtherChars) add(std::string(1, ch));
  for (char ch : kLetters) add(Spaced(std::string(1, ch)));
  for (char ch : kLetters) add(Spaced(Upper(ch)));
  for (std::string_view word : kWords) {
    std::string piece = " ";
    for (char ch : word) add(piece += ch);  // " t", " th", " the": each extends the one before
  }
  for (int length = 2; length <= 4 && !acc->full(); length++) {
    // Letter strings, then the same with a leading space ("th", ..., then " th", ...).
    ForEachLetterTuple(length, [&](const std::string& s) {
      add(s);
      return !acc->full();
    });
    ForEachLetterTuple(length, [&](const std::string& s) {
      add(Spaced(s));
      return !acc->full();
    });
  }
}

}  // namespace

shared::Result<SpmVocab> MakeSyntheticSpmVocab(int vocab_size) {
  if (vocab_size < kByteVocabSize || vocab_size > kMaxSyntheticVocabSize) {
    return shared::InvalidArgument("vocabulary size " + std::to_string(vocab_size) +
                                   " is outside [" + std::to_string(kByteVocabSize) + ", " +
                                   std::to_string(kMaxSyntheticVocabSize) + "]");
  }
  Accumulator acc(vocab_size);
  AddSpecialsAndBytes(&acc);
  AddNormalPieces(&acc);
  SM_CHECK(acc.full()) << "synthetic vocabulary ran out of pieces below " << vocab_size;
  SpmVocab vocab = acc.Take();
  vocab.unk_id = 0;
  vocab.bos_id = 1;
  vocab.eos_id = 2;
  vocab.add_bos = true;
  vocab.add_space_prefix = vocab_size > kByteVocabSize;
  return vocab;
}

}  // namespace smallmind::worker
