// The heap-based merge of BpeTokenizer::Encode against a plain reference (rescan every adjacent
// pair, apply the lowest-ranked one, leftmost on ties, repeat), on random vocabularies whose
// merges reach the same token by different splits.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "worker/tokenizer/bpe_tokenizer.h"

namespace smallmind::worker {
namespace {

class ReferenceBpe {
 public:
  explicit ReferenceBpe(const BpeVocab& v) {
    for (size_t i = 0; i < v.tokens.size(); ++i) {
      if (v.types[i] != SpmTokenType::kControl) ids_.emplace(v.tokens[i], i);
    }
    for (size_t r = 0; r < v.merges.size(); ++r) ranks_.emplace(v.merges[r], r);
    splitter_ = std::move(PreTokenizer::Create(v.pre.patterns)).value();
  }

  std::vector<TokenId> Encode(const std::string& text) const {
    std::vector<std::string_view> pieces;
    splitter_->Split(text, &pieces);
    std::vector<TokenId> out;
    for (std::string_view piece : pieces) {
      std::vector<std::string> sym;
      for (char c : piece) {
        std::string s;
        map_.AppendEncoded(std::string_view(&c, 1), &s);
        sym.push_back(s);
      }
      while (true) {
        size_t best = sym.size();
        size_t best_rank = 0;
        for (size_t i = 0; i + 1 < sym.size(); ++i) {
          auto it = ranks_.find(sym[i] + " " + sym[i + 1]);
          if (it == ranks_.end() || !ids_.count(sym[i] + sym[i + 1])) continue;
          if (best == sym.size() || it->second < best_rank) {
            best = i;
            best_rank = it->second;
          }
        }
        if (best == sym.size()) break;
        sym[best] += sym[best + 1];
        sym.erase(sym.begin() + static_cast<long>(best) + 1);
      }
      for (const std::string& s : sym) out.push_back(ids_.at(s));
    }
    return out;
  }

 private:
  ByteLevelMap map_;
  std::map<std::string, TokenId> ids_;
  std::map<std::string, size_t> ranks_;
  std::unique_ptr<PreTokenizer> splitter_;
};

BpeVocab RandomVocab(std::mt19937* rng) {
  ByteLevelMap map;
  BpeVocab v;
  for (int b = 0; b < 256; ++b) {
    const char byte = static_cast<char>(b);
    v.tokens.emplace_back();
    map.AppendEncoded(std::string_view(&byte, 1), &v.tokens.back());
  }
  std::vector<std::string> grown = {"a", "b", "c", "\xC4\xA0"};  // "Ġ" is the space
  std::map<std::string, bool> merged;
  for (int tries = 0; tries < 400 && v.merges.size() < 60; ++tries) {
    const std::string& l = grown[(*rng)() % grown.size()];
    const std::string& r = grown[(*rng)() % grown.size()];
    const std::string m = l + " " + r;
    if (l.size() + r.size() > 8 || merged.count(m)) continue;
    merged[m] = true;
    v.merges.push_back(m);
    const std::string joined = l + r;
    bool known = false;
    for (const std::string& t : v.tokens) known = known || t == joined;
    if (!known) {
      v.tokens.push_back(joined);
      grown.push_back(joined);
    }
  }
  v.types.assign(v.tokens.size(), SpmTokenType::kNormal);
  v.pre = *FindPreTokenizerFamily("gpt2");
  return v;
}

TEST(BpeMergeTest, HeapMergeEqualsTheRescanReferenceOnRandomVocabularies) {
  std::mt19937 rng(1234);
  const std::string alphabet = "abc ";
  for (int vocab = 0; vocab < 40; ++vocab) {
    const BpeVocab v = RandomVocab(&rng);
    const ReferenceBpe ref(v);
    auto tok = BpeTokenizer::Create(v);
    ASSERT_TRUE(tok.ok()) << tok.status().ToString();
    for (int t = 0; t < 50; ++t) {
      std::string text;
      const int len = static_cast<int>(rng() % 40);
      for (int i = 0; i < len; ++i) text.push_back(alphabet[rng() % alphabet.size()]);
      ASSERT_EQ((*tok)->Encode(text, false), ref.Encode(text))
          << "vocab " << vocab << " '" << text << "'";
    }
  }
}

}  // namespace
}  // namespace smallmind::worker
