#include "worker/tokenizer/detokenizer.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "worker/tokenizer/spm_tokenizer.h"

namespace smallmind::worker {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

// Byte-level vocabulary: token b + 3 is byte b, so a test can split text anywhere.
std::vector<TokenId> ByteIds(const std::string& bytes) {
  std::vector<TokenId> ids;
  for (char c : bytes) ids.push_back(static_cast<uint8_t>(c) + 3);
  return ids;
}

std::string DecodeAll(const Tokenizer& tok, const std::vector<TokenId>& ids) {
  Detokenizer detok(tok);
  std::string out;
  for (TokenId id : ids) detok.Push(id, &out);
  detok.Flush(&out);
  return out;
}

// An independent reference built from the definition of UTF-8: the set of every prefix of the
// encoding of every Unicode scalar value. Decoding takes the longest valid prefix at each point: a
// complete encoding is copied, anything else (a maximal ill-formed subpart) is one U+FFFD.
class Utf8Reference {
 public:
  Utf8Reference() {
    prefixes_.reserve(1200000);
    for (uint32_t cp = 0; cp <= 0x10FFFF; ++cp) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      const std::string e = Encode(cp);
      for (size_t k = 1; k < e.size(); ++k) prefixes_.insert(Key(e.data(), k, false));
      prefixes_.insert(Key(e.data(), e.size(), true));
    }
  }
  std::string Decode(const std::string& s) const {
    std::string out;
    for (size_t i = 0; i < s.size();) {
      size_t k = 0;
      bool complete = false;
      while (k < 4 && i + k < s.size()) {
        if (prefixes_.count(Key(&s[i], k + 1, true))) {
          complete = true;
        } else if (!prefixes_.count(Key(&s[i], k + 1, false))) {
          break;
        }
        ++k;
        if (complete) break;
      }
      out += complete ? s.substr(i, k) : kFffd;
      i += k > 0 ? k : 1;
    }
    return out;
  }

 private:
  // Bytes, length and completeness packed into one integer.
  static uint64_t Key(const char* p, size_t len, bool complete) {
    uint64_t key = uint64_t{complete} << 40 | uint64_t{len} << 32;
    for (size_t i = 0; i < len; ++i) key |= uint64_t{static_cast<uint8_t>(p[i])} << (8 * i);
    return key;
  }
  static std::string Encode(uint32_t cp) {
    std::string e;
    if (cp < 0x80) {
      e += static_cast<char>(cp);
    } else if (cp < 0x800) {
      e += static_cast<char>(0xC0 | cp >> 6);
      e += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      e += static_cast<char>(0xE0 | cp >> 12);
      e += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
      e += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      e += static_cast<char>(0xF0 | cp >> 18);
      e += static_cast<char>(0x80 | (cp >> 12 & 0x3F));
      e += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
      e += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return e;
  }
  std::unordered_set<uint64_t> prefixes_;
};

TEST(DetokenizerTest, CodePointSplitAcrossTokensWaitsForItsLastByte) {
  auto tok = MakeByteLevelTokenizer();
  Detokenizer detok(*tok);
  std::string out;
  const std::string emoji = "\xF0\x9F\x98\x80";
  for (size_t i = 0; i + 1 < emoji.size(); ++i) {
    detok.Push(static_cast<uint8_t>(emoji[i]) + 3, &out);
    EXPECT_EQ(out, "") << "after byte " << i;
    EXPECT_TRUE(detok.has_pending());
  }
  detok.Push(static_cast<uint8_t>(emoji.back()) + 3, &out);
  EXPECT_EQ(out, emoji);
  detok.Push('a' + 3, &out);
  EXPECT_EQ(out, emoji + "a");
}

TEST(DetokenizerTest, IllFormedBytesBecomeOneReplacementPerMaximalSubpart) {
  auto tok = MakeByteLevelTokenizer();
  // Expected values agree with Python's bytes.decode("utf-8", "replace").
  EXPECT_EQ(DecodeAll(*tok, ByteIds(std::string("\xC3") + "a")), kFffd + "a");  // bad continuation
  EXPECT_EQ(DecodeAll(*tok, ByteIds("\xC0\xAF")), kFffd + kFffd);               // overlong
  EXPECT_EQ(DecodeAll(*tok, ByteIds("\xE0\x80\x80")), kFffd + kFffd + kFffd);
  EXPECT_EQ(DecodeAll(*tok, ByteIds("\xED\xA0\x80")), kFffd + kFffd + kFffd);  // surrogate
  EXPECT_EQ(DecodeAll(*tok, ByteIds("\xF4\x90\x80\x80")), kFffd + kFffd + kFffd + kFffd);
  EXPECT_EQ(DecodeAll(*tok, ByteIds("\xF5")), kFffd);                               // past U+10FFFF
  EXPECT_EQ(DecodeAll(*tok, ByteIds(std::string("\xE2\x82") + "a")), kFffd + "a");  // truncated
  EXPECT_EQ(DecodeAll(*tok, ByteIds("\xF0\x9F\x98\x80\x80")), "\xF0\x9F\x98\x80" + kFffd);
}

TEST(DetokenizerTest, FlushTurnsADanglingSequenceIntoOneReplacement) {
  auto tok = MakeByteLevelTokenizer();
  Detokenizer detok(*tok);
  std::string out;
  for (TokenId id : ByteIds("ok\xF0\x9F\x98")) detok.Push(id, &out);
  EXPECT_EQ(out, "ok");
  detok.Flush(&out);
  EXPECT_EQ(out, "ok" + kFffd);
  EXPECT_FALSE(detok.has_pending());
  detok.Flush(&out);
  EXPECT_EQ(out, "ok" + kFffd);
}

TEST(DetokenizerTest, GarbageNeverEndsTheStream) {
  auto tok = MakeByteLevelTokenizer();
  Detokenizer detok(*tok);
  std::string out;
  for (int round = 0; round < 50; ++round) {
    for (TokenId id : ByteIds("\xFF\xC3\xED\xA0\xE2\x82")) detok.Push(id, &out);
  }
  out.clear();
  for (TokenId id : ByteIds("still here \xC3\xA9")) detok.Push(id, &out);
  EXPECT_EQ(out, kFffd + "still here \xC3\xA9");  // the dangling E2 82 is one subpart
}

TEST(DetokenizerTest, ControlTokensAndBosSpaceRuleFollowTheTokenizer) {
  auto tok = MakeByteLevelTokenizer();
  std::string out;
  Detokenizer detok(*tok, /*prev=*/1);
  detok.Push(2, &out);        // EOS
  detok.Push(1, &out);        // BOS
  detok.Push(' ' + 3, &out);  // a byte token keeps its space even right after BOS
  EXPECT_EQ(out, " ");
}

TEST(DetokenizerTest, PushDoesNotReallocateAnOutputWithCapacity) {
  auto tok = MakeByteLevelTokenizer();
  Detokenizer detok(*tok);
  std::string out;
  out.reserve(256);
  const char* data = out.data();
  for (TokenId id : ByteIds("h\xC3\xA9llo \xF0\x9F\x98\x80 \xFF")) detok.Push(id, &out);
  EXPECT_EQ(out.data(), data);
  EXPECT_EQ(out, "h\xC3\xA9llo \xF0\x9F\x98\x80 " + kFffd);
}

TEST(DetokenizerTest, RandomBytesMatchTheReferenceAndEveryDeltaIsValidUtf8) {
  auto tok = MakeByteLevelTokenizer();
  Utf8Reference reference;
  std::mt19937 rng(7);
  // Weighted towards the bytes where UTF-8 has its edge cases.
  const std::vector<uint8_t> interesting = {'a',  ' ',  0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0,
                                            0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xED,
                                            0xEE, 0xEF, 0xF0, 0xF1, 0xF4, 0xF5, 0xFF};
  std::uniform_int_distribution<size_t> pick(0, interesting.size() - 1);
  std::uniform_int_distribution<int> any(0, 255);
  std::uniform_int_distribution<int> len(0, 24);
  for (int round = 0; round < 3000; ++round) {
    std::string bytes;
    for (int n = len(rng); n > 0; --n) {
      bytes += static_cast<char>(round % 3 == 0 ? any(rng) : interesting[pick(rng)]);
    }
    const std::string expected = reference.Decode(bytes);
    Detokenizer detok(*tok);
    std::string out;
    for (TokenId id : ByteIds(bytes)) {
      detok.Push(id, &out);
      // Streaming safety: what has been sent is valid UTF-8 and a prefix of the final text.
      ASSERT_EQ(reference.Decode(out), out);
      ASSERT_EQ(expected.compare(0, out.size(), out), 0);
    }
    detok.Flush(&out);
    ASSERT_EQ(out, expected) << "round " << round;
  }
}

}  // namespace
}  // namespace smallmind::worker
