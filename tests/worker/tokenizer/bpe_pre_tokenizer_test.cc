// PreTokenizer and the tokenizer.ggml.pre families: splits computed by hand from each family's
// regexes, every family compiling, and robustness on invalid UTF-8 and very long runs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "worker/tokenizer/pre_tokenizer.h"
#include "worker/tokenizer/pre_tokenizer_families.h"

namespace smallmind::worker {
namespace {

using Pieces = std::vector<std::string>;

Pieces SplitWith(const std::string& pre, const std::string& text) {
  auto family = FindPreTokenizerFamily(pre);
  SM_CHECK(family.ok()) << family.status().ToString();
  auto splitter = PreTokenizer::Create(family->patterns);
  SM_CHECK(splitter.ok()) << splitter.status().ToString();
  std::vector<std::string_view> views;
  (*splitter)->Split(text, &views);
  return Pieces(views.begin(), views.end());
}

std::string Join(const Pieces& pieces) {
  std::string s;
  for (const std::string& p : pieces) s += p;
  return s;
}

TEST(PreTokenizerTest, Gpt2KeepsASpaceWithTheWordAfterItAndSplitsContractions) {
  EXPECT_EQ(SplitWith("gpt-2", "Hello world's  test 12345!!"),
            (Pieces{"Hello", " world", "'s", " ", " test", " 12345", "!!"}));
  EXPECT_EQ(SplitWith("gpt-2", "a\n\nb"), (Pieces{"a", "\n", "\n", "b"}));
  EXPECT_EQ(SplitWith("gpt-2", "I'M"), (Pieces{"I", "'", "M"}));  // case-sensitive contractions
}

TEST(PreTokenizerTest, Llama3GroupsDigitsInThreesAndFoldsContractionCase) {
  EXPECT_EQ(SplitWith("llama-bpe", "I'M 1234567 ok"),
            (Pieces{"I", "'M", " ", "123", "456", "7", " ok"}));
  // A letter run takes one leading non-letter; newlines go with the preceding symbols.
  EXPECT_EQ(SplitWith("llama3", "(x) ...\n\nnext"), (Pieces{"(x", ")", " ...\n\n", "next"}));
}

TEST(PreTokenizerTest, Qwen2SplitsEveryDigit) {
  EXPECT_EQ(SplitWith("qwen2", "x 2024"), (Pieces{"x", " ", "2", "0", "2", "4"}));
}

TEST(PreTokenizerTest, StarcoderIsolatesDigitsBeforeTheGpt2Regex) {
  EXPECT_EQ(SplitWith("starcoder", "v12 go"), (Pieces{"v", "1", "2", " go"}));
}

TEST(PreTokenizerTest, FalconSplitsPunctuationRunsAndDigitTriples) {
  EXPECT_EQ(SplitWith("falcon", "a+=b 12345"), (Pieces{"a", "+=", "b", " ", "123", "45"}));
}

TEST(PreTokenizerTest, DeepseekCoderSplitsNewlinesLettersPunctuationAndDigits) {
  EXPECT_EQ(SplitWith("deepseek-coder", "if x:\n  y=42"),
            (Pieces{"if", " x", ":", "\n", " ", " y", "=", "4", "2"}));
}

TEST(PreTokenizerTest, TekkenSplitsWordsAtCaseChangesAndEveryDigit) {
  // An upper-case run followed by lower-case letters is one word; a lower-to-upper change splits.
  EXPECT_EQ(SplitWith("tekken", "camelCase HTTPServer iPhone"),
            (Pieces{"camel", "Case", " HTTPServer", " i", "Phone"}));
  EXPECT_EQ(SplitWith("tekken", "v2024 I'm"), (Pieces{"v", "2", "0", "2", "4", " I", "'m"}));
  // Symbols keep the newlines and slashes after them; a lone space before a digit stands alone.
  EXPECT_EQ(SplitWith("tekken", "x = 1;\n\n// c"), (Pieces{"x", " =", " ", "1", ";\n\n//", " c"}));
  // ÉCOLE café: \x43 is 'C' (a hex digit after \x89 would extend the escape).
  EXPECT_EQ(SplitWith("tekken", "\xC3\x89\x43OLE caf\xC3\xA9 a  \n b"),
            (Pieces{"\xC3\x89\x43OLE", " caf\xC3\xA9", " a", "  \n", " b"}));
}

TEST(PreTokenizerTest, CaseSplitFamiliesKeepCombiningMarksInTheWord) {
  const std::string text = "e\xCC\x81t";  // e, U+0301 COMBINING ACUTE ACCENT, t
  EXPECT_EQ(SplitWith("tekken", text), (Pieces{text}));
  EXPECT_EQ(SplitWith("gpt-4o", text), (Pieces{text}));
  EXPECT_EQ(SplitWith("qwen35", text + " 12"), (Pieces{text, " ", "1", "2"}));
  // Khmer: consonants (Lo) with vowel signs and a diacritic (Mc, Mn) stay one word.
  const std::string khmer =
      "\xE1\x9E\x80\xE1\x9E\xB6\xE1\x9E\x93\xE1\x9F\x8B\xE1\x9E\x8F\xE1\x9F\x82";
  EXPECT_EQ(SplitWith("gpt-4o", khmer), (Pieces{khmer}));
  // A non-ASCII capital after a lower-case letter starts a word, as an ASCII one does.
  EXPECT_EQ(SplitWith("tekken", "a\xC3\x89\x62 x\xC3\x9Cy"),  // aÉb xÜy
            (Pieces{"a", "\xC3\x89\x62", " x", "\xC3\x9Cy"}));
  EXPECT_EQ(SplitWith("gpt-4o", "a\xC3\x89\x62"), (Pieces{"a", "\xC3\x89\x62"}));
  // Llama 3's and Qwen2's \p{L}+ stop at the mark, which then leads the next letter run.
  EXPECT_EQ(SplitWith("llama-bpe", text), (Pieces{"e", "\xCC\x81t"}));
  EXPECT_EQ(SplitWith("qwen2", text), (Pieces{"e", "\xCC\x81t"}));
}

TEST(PreTokenizerTest, Gpt4oEndsCaseSplitWordsWithContractionsAndGroupsDigitsInThrees) {
  EXPECT_EQ(SplitWith("gpt-4o", "I'M here, we've 12345"),
            (Pieces{"I'M", " here", ",", " we've", " ", "123", "45"}));
  EXPECT_EQ(SplitWith("gpt-4o", "camelCase a+=\n\nb"),
            (Pieces{"camel", "Case", " a", "+=\n\n", "b"}));
}

TEST(PreTokenizerTest, DeepseekV3SplitsDigitsThenIdeographsThenWords) {
  // An ASCII symbol leads an ASCII word; a space leads a symbol run before it leads a word.
  EXPECT_EQ(SplitWith("deepseek-v3",
                      "Hello 12345 \xE4\xB8\x96\xE7\x95\x8C"
                      "abc.Net .x"),  // 世界
            (Pieces{"Hello", " ", "123", "45", " ", "\xE4\xB8\x96\xE7\x95\x8C", "abc", ".Net", " .",
                    "x"}));
}

TEST(PreTokenizerTest, FamiliesCarryLlamaCppsIgnoreMergesAndBosDefaults) {
  struct Want {
    const char* pre;
    const char* family;
    bool ignore_merges;
    bool add_bos;
  };
  const Want wants[] = {
      {"llama-bpe", "llama3", true, true},   {"smaug-bpe", "llama3", false, false},
      {"dbrx", "llama3", false, false},      {"chatglm-bpe", "llama3", false, false},
      {"tekken", "tekken", true, true},      {"gpt-4o", "gpt4o", false, false},
      {"qwen2", "qwen2", false, false},      {"smollm", "starcoder", false, false},
      {"refact", "starcoder", false, false}, {"olmo", "gpt2", false, false},
  };
  for (const Want& w : wants) {
    auto family = FindPreTokenizerFamily(w.pre);
    ASSERT_TRUE(family.ok()) << w.pre;
    EXPECT_EQ(family->name, w.family) << w.pre;
    EXPECT_EQ(family->ignore_merges, w.ignore_merges) << w.pre;
    EXPECT_EQ(family->add_bos, w.add_bos) << w.pre;
  }
}

TEST(PreTokenizerTest, EverySupportedFamilyCompilesAndCoversItsInput) {
  const std::string text =
      "Hello, y'all! How are you \xF0\x9F\x98\x81 ?\xE6\x88\x91\xE6\x83\xB3 1314151 \t\n  end";
  for (std::string_view pre : SupportedPreTokenizerNames()) {
    auto family = FindPreTokenizerFamily(pre);
    ASSERT_TRUE(family.ok()) << pre;
    auto splitter = PreTokenizer::Create(family->patterns);
    ASSERT_TRUE(splitter.ok()) << pre << ": " << splitter.status().ToString();
    EXPECT_EQ((*splitter)->pattern_count(), static_cast<int>(family->patterns.size()));
    EXPECT_EQ(Join(SplitWith(std::string(pre), text)), text) << pre;
  }
}

TEST(PreTokenizerTest, UnknownFamilyIsNotFoundAndListsTheSupportedNames) {
  auto family = FindPreTokenizerFamily("jais-2");
  ASSERT_FALSE(family.ok());
  EXPECT_EQ(family.status().code(), shared::StatusCode::kNotFound);
  EXPECT_NE(family.status().message().find("'jais-2'"), std::string::npos);
  EXPECT_NE(family.status().message().find("llama-bpe"), std::string::npos);
}

TEST(PreTokenizerTest, InvalidUtf8IsKeptInThePiecesBetweenMatches) {
  const std::string text = "ab\xFF\xC3 cd\x80";
  const Pieces pieces = SplitWith("gpt-2", text);
  EXPECT_EQ(Join(pieces), text);
  EXPECT_EQ(pieces.front(), "ab");
}

TEST(PreTokenizerTest, LongRunsAreSplitWithoutLosingBytes) {
  const std::string spaces(1 << 20, ' ');
  const std::string text = spaces + "x" + std::string(1 << 20, '7') + spaces;
  for (const char* pre : {"gpt-2", "llama-bpe", "qwen2", "deepseek-llm", "falcon", "tekken",
                          "gpt-4o", "deepseek-v3"}) {
    const Pieces pieces = SplitWith(pre, text);
    EXPECT_EQ(Join(pieces), text) << pre;
  }
}

TEST(PreTokenizerTest, NoPatternKeepsTheTextWhole) {
  auto splitter = PreTokenizer::Create({});
  ASSERT_TRUE(splitter.ok());
  std::vector<std::string_view> pieces;
  (*splitter)->Split("a b", &pieces);
  EXPECT_EQ(pieces, (std::vector<std::string_view>{"a b"}));
  pieces.clear();
  (*splitter)->Split("", &pieces);
  EXPECT_TRUE(pieces.empty());
}

}  // namespace
}  // namespace smallmind::worker
