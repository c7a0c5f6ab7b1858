// The heap-based merge of SpmTokenizer::Encode against a literal port of run.c's O(n^2) loop, on
// random vocabularies full of score ties and on tok512 with random text.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tests/testing/shared_data.h"
#include "worker/tokenizer/spm_tokenizer.h"

namespace smallmind::worker {
namespace {

// run.c's encode(), written as plainly as the original: rescan all adjacent pairs, merge the best
// (first seen wins a tie), repeat. `v` must already use ' ' for space.
class RunCReference {
 public:
  explicit RunCReference(const SpmVocab& v) : v_(v) {
    for (size_t i = 0; i < v.pieces.size(); ++i) {
      if ((v.types[i] == SpmTokenType::kNormal || v.types[i] == SpmTokenType::kUserDefined) &&
          !v.pieces[i].empty()) {
        lookup_.emplace(v.pieces[i], static_cast<TokenId>(i));  // lowest id wins
      }
      if (v.types[i] == SpmTokenType::kByte) {
        bytes_.emplace(static_cast<char>(std::stoi(v.pieces[i].substr(3, 2), nullptr, 16)), i);
      }
    }
  }

  std::vector<TokenId> Encode(const std::string& text) const {
    struct Tok {
      TokenId id;
      std::string str;  // empty for byte/unknown symbols, which never merge
    };
    std::vector<Tok> toks;
    if (text.empty()) return {};
    const std::string in = " " + text;
    for (size_t c = 0; c < in.size();) {
      size_t len = 1;
      while (c + len < in.size() && len < 4 && (static_cast<uint8_t>(in[c + len]) & 0xC0) == 0x80) {
        ++len;
      }
      const std::string cp = in.substr(c, len);
      if (auto it = lookup_.find(cp); it != lookup_.end()) {
        toks.push_back({it->second, cp});
      } else {
        bool all = true;
        for (char b : cp) all = all && bytes_.count(b);
        if (all) {
          for (char b : cp) toks.push_back({bytes_.at(b), ""});
        } else if (v_.unk_id >= 0) {
          toks.push_back({v_.unk_id, ""});
        }
      }
      c += len;
    }
    for (;;) {
      float best_score = -std::numeric_limits<float>::infinity();
      int best_idx = -1;
      TokenId best_id = -1;
      for (size_t i = 0; i + 1 < toks.size(); ++i) {
        if (toks[i].str.empty() || toks[i + 1].str.empty()) continue;
        auto it = lookup_.find(toks[i].str + toks[i + 1].str);
        if (it != lookup_.end() && v_.scores[it->second] > best_score) {
          best_score = v_.scores[it->second];
          best_idx = static_cast<int>(i);
          best_id = it->second;
        }
      }
      if (best_idx < 0) break;
      toks[best_idx] = {best_id, toks[best_idx].str + toks[best_idx + 1].str};
      toks.erase(toks.begin() + best_idx + 1);
    }
    std::vector<TokenId> ids;
    for (const Tok& t : toks) ids.push_back(t.id);
    return ids;
  }

 private:
  const SpmVocab& v_;
  std::map<std::string, TokenId> lookup_;
  std::map<char, TokenId> bytes_;
};

const std::vector<std::string> kAlphabet = {
    "a", "b", "c", " ", "\xC3\xA9", "\xF0\x9F\x98\x80", "x", "\xFF", "\x80", "\xC3"};

// Specials and all 256 byte tokens, the code points a, b, c, ' ', é (not x, 😀 or the stray
// bytes), and merged pieces built from existing ones with scores in {-4..0}, so ties abound.
SpmVocab RandomVocab(std::mt19937& rng) {
  SpmVocab v;
  v.pieces = {"<unk>", "<s>", "</s>"};
  v.types = {SpmTokenType::kUnknown, SpmTokenType::kControl, SpmTokenType::kControl};
  char hex[8];
  for (int b = 0; b < 256; ++b) {
    std::snprintf(hex, sizeof(hex), "<0x%02X>", b);
    v.pieces.push_back(hex);
    v.types.push_back(SpmTokenType::kByte);
  }
  const size_t first_normal = v.pieces.size();
  for (int i = 0; i < 5; ++i) v.pieces.push_back(kAlphabet[i]);
  std::uniform_int_distribution<int> n_merged(5, 80);
  for (int m = n_merged(rng); m > 0; --m) {
    std::uniform_int_distribution<size_t> pick(first_normal, v.pieces.size() - 1);
    std::string piece = v.pieces[pick(rng)] + v.pieces[pick(rng)];
    if (piece.size() <= 12) v.pieces.push_back(piece);  // duplicates allowed: lowest id wins
  }
  v.types.resize(v.pieces.size(), SpmTokenType::kNormal);
  std::uniform_int_distribution<int> score(-4, 0);
  for (size_t i = 0; i < v.pieces.size(); ++i) {
    v.scores.push_back(i < first_normal ? 0.0f : static_cast<float>(score(rng)));
  }
  v.unk_id = 0;
  v.bos_id = 1;
  v.eos_id = 2;
  return v;
}

std::string RandomText(std::mt19937& rng, const std::vector<std::string>& alphabet, int max_len) {
  std::uniform_int_distribution<int> len(0, max_len);
  std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1);
  std::string s;
  for (int n = len(rng); n > 0; --n) s += alphabet[pick(rng)];
  return s;
}

TEST(SpmMergeTest, HeapMergeEqualsRunCLoopOnRandomVocabulariesWithTies) {
  std::mt19937 rng(1234);
  int compared = 0;
  for (int vocab_round = 0; vocab_round < 40; ++vocab_round) {
    SpmVocab vocab = RandomVocab(rng);
    RunCReference reference(vocab);
    auto tok = SpmTokenizer::Create(vocab);
    ASSERT_TRUE(tok.ok()) << tok.status().ToString();
    for (int i = 0; i < 100; ++i) {
      const std::string text = RandomText(rng, kAlphabet, 40);
      ASSERT_EQ((*tok)->Encode(text, false), reference.Encode(text))
          << "vocab round " << vocab_round;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 4000);
}

TEST(SpmMergeTest, HeapMergeEqualsRunCLoopOnTok512) {
  SM_REQUIRE_SHARED_DATA("models/tok512.bin");
  const std::string path = testing::SharedDataPath("models/tok512.bin");
  auto tok = LoadLlama2cTokenizer(path, 512);
  ASSERT_TRUE(tok.ok());
  SpmVocab vocab;
  for (TokenId i = 0; i < 512; ++i) {
    vocab.pieces.emplace_back((*tok)->Piece(i));
    vocab.scores.push_back((*tok)->Score(i));
    vocab.types.push_back((*tok)->Type(i));
  }
  vocab.unk_id = 0;
  RunCReference reference(vocab);
  // Letters weighted like text, plus punctuation, newlines and code points with no piece.
  std::vector<std::string> alphabet = {
      "e", "t", "a", "o", "i", "n", " ", " ", " ", "s",  "h", "r",  "d", "l",        "u",
      "c", "m", "w", "y", "g", "L", "T", ".", ",", "\n", "'", "\"", "!", "\xC3\xA9", "\xE2\x80\x8A",
      "\t"};
  std::mt19937 rng(99);
  for (int i = 0; i < 1500; ++i) {
    const std::string text = RandomText(rng, alphabet, 60);
    ASSERT_EQ((*tok)->Encode(text, false), reference.Encode(text)) << "text: " << text;
  }
}

}  // namespace
}  // namespace smallmind::worker
