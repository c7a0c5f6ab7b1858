#include "worker/tokenizer/synthetic_vocab.h"

#include <map>
#include <set>
#include <utility>

#include "worker/tokenizer/byte_level_map.h"

namespace smallmind::worker {

namespace {

constexpr std::string_view kSpmSpace = "\xE2\x96\x81";  // U+2581 '▁'

// One paragraph of everything pre-tokenizers treat differently.
constexpr std::string_view kParagraph =
    "The quick brown fox jumps over the lazy dog. I'M sure we've been told it's 12:30, isn't it?\n"
    "  Indented text\twith a tab, then\n\n\nthree newlines and    four spaces.\n"
    "def encode(text):\n    return [ord(c) for c in text]  # 42 chars, 3.14 or 1,000,000?\n"
    "HTTPServer camelCase iPhone McDonald's \xC3\x89"
    "COLE caf\xC3\xA9 na\xC3\xAFve e\xCC\x81t\xC3\xA9\n"
    "Numbers: 3 33 333 3333 33333 333333 3333333 2024-01-15, v1.2.3, 0x1F, $9.99 (50%)...\n"
    "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82, \xD0\xBC\xD0\xB8\xD1\x80! "  // Привет, мир!
    "\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C\xE4\xB8\x96\xE7\x95\x8C\xE3\x80\x82 "  // 你好，世界。
    "\xE1\x9E\x80\xE1\x9E\xB6\xE1\x9E\x93\xE1\x9F\x8B "                          // Khmer
    "\xF0\x9F\x9A\x80 \xF0\x9F\x98\xB6\xE2\x80\x8D\xF0\x9F\x8C\xAB\xEF\xB8\x8F ok!!\n"  // emoji
    "<html><body class=\"main\">Hello, world!</body></html> ------======= '''```\"\"\"\n";

bool IsContinuation(char c) { return (static_cast<uint8_t>(c) & 0xC0) == 0x80; }

// The code points of `s` as strings (invalid bytes alone).
std::vector<std::string> CodePoints(std::string_view s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    size_t len = 1;
    while (i + len < s.size() && IsContinuation(s[i + len])) ++len;
    out.emplace_back(s.substr(i, len));
    i += len;
  }
  return out;
}

struct Word {
  std::vector<std::string> symbols;
  int count = 1;
};
using Pair = std::pair<std::string, std::string>;

// Greedy BPE training: up to `n` times, merge the most frequent adjacent pair (ties: the
// lexicographically smallest) everywhere, left to right; stops early when no pair occurs twice.
std::vector<Pair> LearnMerges(std::vector<Word>* words, int n) {
  std::vector<Pair> merges;
  for (int step = 0; step < n; ++step) {
    std::map<Pair, int> counts;
    for (const Word& w : *words) {
      for (size_t i = 0; i + 1 < w.symbols.size(); ++i) {
        counts[{w.symbols[i], w.symbols[i + 1]}] += w.count;
      }
    }
    const Pair* best = nullptr;
    int best_count = 1;
    for (const auto& [pair, count] : counts) {
      if (count > best_count) {
        best = &pair;
        best_count = count;
      }
    }
    if (best == nullptr) break;
    const Pair merge = *best;
    for (Word& w : *words) {
      std::vector<std::string> merged;
      merged.reserve(w.symbols.size());
      for (size_t i = 0; i < w.symbols.size(); ++i) {
        if (i + 1 < w.symbols.size() && w.symbols[i] == merge.first &&
            w.symbols[i + 1] == merge.second) {
          merged.push_back(merge.first + merge.second);
          ++i;
        } else {
          merged.push_back(w.symbols[i]);
        }
      }
      w.symbols = std::move(merged);
    }
    merges.push_back(merge);
  }
  return merges;
}

// Appends pieces while keeping them distinct (llama.cpp refuses a vocabulary with duplicates).
class PieceList {
 public:
  bool Add(std::string piece, float score, SpmTokenType type) {
    if (!seen_.insert(piece).second) return false;
    vocab_.pieces.push_back(std::move(piece));
    vocab_.scores.push_back(score);
    vocab_.types.push_back(type);
    return true;
  }
  size_t size() const { return vocab_.pieces.size(); }
  SpmVocab Take() { return std::move(vocab_); }

 private:
  SpmVocab vocab_;
  std::set<std::string, std::less<>> seen_;
};

std::string Repeat(std::string_view s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out.append(s);
  return out;
}

// The SentencePiece words of `corpus`: spaces become '▁', a word starts at each '▁' run and at
// each newline run ends one (newlines are user-defined pieces, cut out before merging).
std::vector<Word> SpmWords(std::string_view corpus) {
  std::vector<Word> words;
  std::map<std::string, size_t> index;  // word text -> position in words
  std::vector<std::string> current;
  std::string text;
  auto flush = [&] {
    if (current.empty()) return;
    auto [it, inserted] = index.try_emplace(text, words.size());
    if (inserted) {
      words.push_back({current, 1});
    } else {
      ++words[it->second].count;
    }
    current.clear();
    text.clear();
  };
  bool prev_space = false;
  for (std::string& cp : CodePoints(corpus)) {
    if (cp == "\n") {
      flush();
      prev_space = false;
      continue;
    }
    const bool space = cp == " ";
    if (space) cp = std::string(kSpmSpace);
    if (space && !prev_space) flush();
    prev_space = space;
    text += cp;
    current.push_back(std::move(cp));
  }
  flush();
  return words;
}

}  // namespace

std::string SampleText(size_t bytes) {
  std::string out(kParagraph);
  while (out.size() < bytes) out.append(kParagraph);
  size_t cut = bytes < kParagraph.size() ? kParagraph.size() : bytes;
  while (cut < out.size() && IsContinuation(out[cut])) ++cut;
  out.resize(cut);
  return out;
}

BpeVocab MakeSyntheticBpeVocab(std::string_view corpus, int n_merges,
                               const std::vector<std::string>& whole_words) {
  const ByteLevelMap map;
  auto spell = [&map](std::string_view raw) {
    std::string s;
    map.AppendEncoded(raw, &s);
    return s;
  };
  BpeVocab v;
  std::set<std::string, std::less<>> seen;
  auto add = [&](std::string token, SpmTokenType type) {
    if (!seen.insert(token).second) return;
    v.tokens.push_back(std::move(token));
    v.types.push_back(type);
  };
  for (int b = 0; b < 256; ++b)
    add(spell(std::string(1, static_cast<char>(b))), SpmTokenType::kNormal);
  std::vector<Word> words(1);
  for (char c : corpus) words[0].symbols.push_back(spell(std::string_view(&c, 1)));
  for (const Pair& m : LearnMerges(&words, n_merges)) {
    v.merges.push_back(m.first + " " + m.second);
    add(m.first + m.second, SpmTokenType::kNormal);
  }
  for (const std::string& w : whole_words) add(spell(w), SpmTokenType::kNormal);
  for (const char* control : {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}) {
    add(control, SpmTokenType::kControl);
  }
  add("<|sep|>", SpmTokenType::kUserDefined);
  return v;
}

SpmVocab MakeSyntheticSpmVocab(std::string_view corpus, int n_merges, int n_pieces) {
  PieceList list;
  list.Add("<pad>", 0, SpmTokenType::kControl);
  list.Add("<eos>", 0, SpmTokenType::kControl);
  list.Add("<bos>", 0, SpmTokenType::kControl);
  list.Add("<unk>", 0, SpmTokenType::kUnknown);
  list.Add("<start_of_turn>", 0, SpmTokenType::kUserDefined);
  list.Add("<end_of_turn>", 0, SpmTokenType::kUserDefined);
  for (int k = 1; k <= 31; ++k) list.Add(Repeat("\n", k), 0, SpmTokenType::kUserDefined);
  for (int k = 2; k <= 31; ++k) list.Add(Repeat(kSpmSpace, k), 0, SpmTokenType::kUserDefined);
  constexpr char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    list.Add(std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">", 0, SpmTokenType::kByte);
  }
  std::vector<Word> words = SpmWords(corpus);
  float char_score = -1e6f;
  for (const Word& w : words) {
    for (const std::string& cp : w.symbols) {
      if (list.Add(cp, char_score, SpmTokenType::kNormal)) char_score -= 1;
    }
  }
  float merge_score = -1;
  for (const Pair& m : LearnMerges(&words, n_merges)) {
    if (list.Add(m.first + m.second, merge_score, SpmTokenType::kNormal)) merge_score -= 1;
  }
  SM_CHECK(list.size() <= static_cast<size_t>(n_pieces))
      << "a synthetic SentencePiece vocabulary needs more than " << n_pieces << " pieces";
  float filler_score = -2e6f;
  for (uint64_t k = 26 * 26 * 26 * 26; list.size() < static_cast<size_t>(n_pieces); ++k) {
    std::string filler(kSpmSpace);
    for (uint64_t x = k; x > 0; x /= 26) filler.push_back(static_cast<char>('a' + x % 26));
    if (list.Add(std::move(filler), filler_score, SpmTokenType::kNormal)) filler_score -= 1;
  }
  SpmVocab v = list.Take();
  v.bos_id = 2;
  v.eos_id = 1;
  v.unk_id = 3;
  v.add_bos = true;
  v.add_space_prefix = false;
  return v;
}

}  // namespace smallmind::worker
