// BpeTokenizer on small hand-made vocabularies: merge order by rank, byte alphabet round trips,
// added and control tokens, BOS flags, validation, and UTF-8 streaming through the Detokenizer.
#include "worker/tokenizer/bpe_tokenizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "worker/tokenizer/detokenizer.h"

namespace smallmind::worker {
namespace {

// Ids 0..255 are the 256 single bytes (spelled in GPT-2's alphabet); `extra` follow from 256.
BpeVocab ByteVocab(const std::vector<std::string>& extra, const std::vector<std::string>& merges,
                   const std::string& pre = "gpt2") {
  ByteLevelMap map;
  BpeVocab v;
  for (int b = 0; b < 256; ++b) {
    std::string s;
    const char byte = static_cast<char>(b);
    map.AppendEncoded(std::string_view(&byte, 1), &s);
    v.tokens.push_back(s);
  }
  for (const std::string& t : extra) v.tokens.push_back(t);
  v.types.assign(v.tokens.size(), SpmTokenType::kNormal);
  v.merges = merges;
  v.pre = *FindPreTokenizerFamily(pre);
  return v;
}

std::unique_ptr<BpeTokenizer> Make(BpeVocab v) {
  auto tok = BpeTokenizer::Create(std::move(v));
  SM_CHECK(tok.ok()) << tok.status().ToString();
  return std::move(tok).value();
}

std::string Decode(const Tokenizer& t, const std::vector<TokenId>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) t.AppendTokenBytes(i ? ids[i - 1] : -1, ids[i], &out);
  return out;
}

using Ids = std::vector<TokenId>;

TEST(BpeTokenizerTest, LowerRankedMergeAppliesFirst) {
  // 256 "ab", 257 "bc".
  auto bc_first = Make(ByteVocab({"ab", "bc"}, {"b c", "a b"}));
  EXPECT_EQ(bc_first->Encode("abc", false), (Ids{'a', 257}));
  auto ab_first = Make(ByteVocab({"ab", "bc"}, {"a b", "b c"}));
  EXPECT_EQ(ab_first->Encode("abc", false), (Ids{256, 'c'}));
}

TEST(BpeTokenizerTest, EqualPairsMergeLeftmostFirstAndMergedTokensMergeAgain) {
  // 256 "aa", 257 "aaaa".
  auto tok = Make(ByteVocab({"aa", "aaaa"}, {"a a", "aa aa"}));
  EXPECT_EQ(tok->Encode("aaa", false), (Ids{256, 'a'}));
  EXPECT_EQ(tok->Encode("aaaaa", false), (Ids{257, 'a'}));
  EXPECT_EQ(tok->Encode("aaaaaa", false), (Ids{257, 256}));
}

TEST(BpeTokenizerTest, MergesStayInsideOnePreTokenizerPiece) {
  // "Ġ" is the byte alphabet's space; 256 "Ġa", 257 "aĠ" (never formed: the regex keeps a space
  // with the word after it).
  auto tok = Make(ByteVocab({"\xC4\xA0"
                             "a",
                             "a\xC4\xA0"},
                            {"a \xC4\xA0", "\xC4\xA0 a"}));
  EXPECT_EQ(tok->Encode("a a", false), (Ids{'a', 256}));
}

TEST(BpeTokenizerTest, EveryByteRoundTripsThroughTheByteAlphabet) {
  auto tok = Make(ByteVocab({}, {}));
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  const Ids ids = tok->Encode(all, false);
  EXPECT_EQ(ids.size(), 256u);
  EXPECT_EQ(Decode(*tok, ids), all);
  EXPECT_EQ(tok->Piece(' '), "\xC4\xA0");  // U+0120 'Ġ'
  EXPECT_EQ(tok->Piece('A'), "A");
}

TEST(BpeTokenizerTest, ControlTokenTextIsEncodedAsPlainTextAndDecodesToNothing) {
  BpeVocab v = ByteVocab({"<|endoftext|>"}, {});
  v.types[256] = SpmTokenType::kControl;
  v.eos_id = 256;
  auto tok = Make(std::move(v));
  const Ids ids = tok->Encode("<|endoftext|>", false);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 256), 0);
  EXPECT_EQ(Decode(*tok, ids), "<|endoftext|>");
  std::string out;
  tok->AppendTokenBytes(-1, 256, &out);
  EXPECT_EQ(out, "");
}

TEST(BpeTokenizerTest, UserDefinedTokensAreCutOutLeftmostLongestAndDecodeToTheirRawText) {
  BpeVocab v = ByteVocab({"  ", "   ", "<sep>"}, {});
  for (int id : {256, 257, 258}) v.types[id] = SpmTokenType::kUserDefined;
  auto tok = Make(std::move(v));
  EXPECT_EQ(tok->Encode("a     b", false), (Ids{'a', 257, 256, 'b'}));
  EXPECT_EQ(tok->Encode("x<sep>y", false), (Ids{'x', 258, 'y'}));
  EXPECT_EQ(Decode(*tok, {257, 258}), "   <sep>");
}

TEST(BpeTokenizerTest, AddsBosOnlyWhenAskedAndTheVocabularyHasOne) {
  BpeVocab v = ByteVocab({"<s>"}, {});
  v.types[256] = SpmTokenType::kControl;
  v.bos_id = 256;
  v.add_bos = true;
  auto tok = Make(std::move(v));
  EXPECT_TRUE(tok->add_bos_default());
  EXPECT_EQ(tok->Encode("a", true), (Ids{256, 'a'}));
  EXPECT_EQ(tok->Encode("a", false), (Ids{'a'}));
  EXPECT_EQ(tok->Encode("", true), (Ids{256}));

  BpeVocab no_bos = ByteVocab({}, {});
  no_bos.add_bos = true;  // asked for, but there is no BOS token
  auto plain = Make(std::move(no_bos));
  EXPECT_FALSE(plain->add_bos_default());
  EXPECT_EQ(plain->Encode("a", true), (Ids{'a'}));
}

TEST(BpeTokenizerTest, IgnoreMergesEmitsAWholeWordThatIsAlreadyAToken) {
  // 256 "xyz" is a token no merge reaches.
  auto merging = Make(ByteVocab({"xyz"}, {}, "gpt2"));
  EXPECT_EQ(merging->Encode("xyz", false), (Ids{'x', 'y', 'z'}));
  auto whole = Make(ByteVocab({"xyz"}, {}, "llama-bpe"));
  EXPECT_EQ(whole->Encode("xyz", false), (Ids{256}));
}

TEST(BpeTokenizerTest, BytesWithoutATokenAreDropped) {
  BpeVocab v = ByteVocab({}, {});
  v.tokens['q'] = "[unused-q]";  // no token spells the byte 'q' any more
  auto tok = Make(std::move(v));
  EXPECT_EQ(tok->Encode("aqb", false), (Ids{'a', 'b'}));
}

TEST(BpeTokenizerTest, MergesWhoseTokensAreMissingAreSkipped) {
  auto tok = Make(ByteVocab({"ab"}, {"a b", "c d", "b z"}));
  EXPECT_EQ(tok->merge_count(), 1);  // "cd" and "bz" are no tokens, so those merges cannot apply
  EXPECT_EQ(tok->Encode("abcd", false), (Ids{256, 'c', 'd'}));
}

TEST(BpeTokenizerTest, RejectsMalformedVocabularies) {
  BpeVocab bad_merge = ByteVocab({}, {"ab"});
  EXPECT_NE(BpeTokenizer::Create(std::move(bad_merge)).status().message().find("merge 0 'ab'"),
            std::string::npos);
  BpeVocab bad_type = ByteVocab({}, {});
  bad_type.types[7] = static_cast<SpmTokenType>(9);
  EXPECT_NE(BpeTokenizer::Create(std::move(bad_type)).status().message().find("token 7"),
            std::string::npos);
  BpeVocab bad_bos = ByteVocab({}, {});
  bad_bos.bos_id = 256;
  EXPECT_FALSE(BpeTokenizer::Create(std::move(bad_bos)).ok());
  BpeVocab short_types = ByteVocab({}, {});
  short_types.types.pop_back();
  EXPECT_FALSE(BpeTokenizer::Create(std::move(short_types)).ok());
  BpeVocab bad_regex = ByteVocab({}, {});
  bad_regex.pre.patterns = {"(unclosed"};
  const auto status = BpeTokenizer::Create(std::move(bad_regex)).status();
  EXPECT_EQ(status.code(), shared::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("(unclosed"), std::string::npos) << status.message();
  EXPECT_FALSE(BpeTokenizer::Create(BpeVocab{}).ok());
}

TEST(BpeTokenizerTest, DetokenizerStreamsACodePointSplitAcrossTokens) {
  // U+1F999 is F0 9F A6 99: 256 "ðŁ" spells F0 9F, 257 "¦Ļ" spells A6 99 (GPT-2 alphabet).
  auto tok = Make(ByteVocab({"\xC3\xB0\xC5\x81", "\xC2\xA6\xC4\xBB"},
                            {"\xC3\xB0 \xC5\x81", "\xC2\xA6 \xC4\xBB"}));
  const std::string llama = "\xF0\x9F\xA6\x99";
  const Ids ids = tok->Encode("a" + llama, false);
  ASSERT_EQ(ids, (Ids{'a', 256, 257}));
  Detokenizer detok(*tok);
  std::string text;
  detok.Push(ids[0], &text);
  EXPECT_EQ(text, "a");
  detok.Push(ids[1], &text);
  EXPECT_EQ(text, "a");  // half a code point waits
  EXPECT_TRUE(detok.has_pending());
  detok.Push(ids[2], &text);
  EXPECT_EQ(text, "a" + llama);
  EXPECT_FALSE(detok.has_pending());
}

TEST(BpeTokenizerTest, DetokenizerStreamsTwoByteCharactersEncodedAsSingleBytes) {
  auto tok = Make(ByteVocab({}, {}));
  const std::string text = "\xC3\xA9t\xC3\xA9";  // "été"
  const Ids ids = tok->Encode(text, false);
  ASSERT_EQ(ids.size(), 5u);
  Detokenizer detok(*tok);
  std::string out;
  std::vector<size_t> sizes;
  for (TokenId id : ids) {
    detok.Push(id, &out);
    sizes.push_back(out.size());
  }
  detok.Flush(&out);
  EXPECT_EQ(out, text);
  EXPECT_EQ(sizes, (std::vector<size_t>{0, 2, 3, 3, 5}));
}

}  // namespace
}  // namespace smallmind::worker
