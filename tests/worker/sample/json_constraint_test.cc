#include "worker/sample/json_constraint.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "tests/worker/sample/mask_check.h"

namespace smallmind::worker {
namespace {

// The index of the first byte JsonPrefix refuses, or -1 when it takes them all.
int FirstRefused(std::string_view text, JsonPrefix* out = nullptr) {
  JsonPrefix state;
  for (size_t i = 0; i < text.size(); i++) {
    if (!state.Feed(static_cast<unsigned char>(text[i]))) return static_cast<int>(i);
  }
  if (out != nullptr) *out = state;
  return -1;
}

TEST(JsonPrefixTest, TakesValidObjectsByteByByteAndIsCompleteOnlyAtTheEnd) {
  const std::vector<std::string> docs = {
      "{}",
      "{\"a\":1}",
      "\n{ \"a\" : [1, -2.5e+3, 0, 0.5, 10E2, -0, true, false, null], \"b\": {\"c\": {}} }\n",
      "{\"s\": \"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t \\u00e9 \\u20AC\"}",
      "{\"utf8\": \"é 日本 🙂 \x7f\"}",
      "{\"pair\": \"\\ud83d\\ude42\", \"\": [[], [{}], \"\"]}",
      "{\"n\": -0.0E-1, \"m\": 123456789012345678901234567890}",
  };
  for (const std::string& doc : docs) {
    JsonPrefix state;
    for (size_t i = 0; i < doc.size(); i++) {
      ASSERT_TRUE(state.Feed(static_cast<unsigned char>(doc[i]))) << doc << " at byte " << i;
      // Complete from the closing brace on (trailing whitespace is taken), never before.
      const bool closed = doc.find_last_of('}') <= i;
      EXPECT_EQ(state.complete(), closed) << doc << " at byte " << i;
    }
    EXPECT_TRUE(nlohmann::json::parse(doc).is_object()) << doc;
  }
}

TEST(JsonPrefixTest, RefusesTheFirstByteNoJsonObjectCanContinueWith) {
  const std::vector<std::pair<std::string, int>> cases = {
      {"[1]", 0},                           // the top level must be an object
      {"x", 0},                             //
      {"\"a\"", 0},                         //
      {"{\"a\" 1}", 5},                     // a key needs its colon
      {"{\"a\":01}", 6},                    // no leading zeros
      {"{\"a\":1.}", 7},                    // a fraction needs a digit
      {"{\"a\":1e}", 7},                    // so does an exponent
      {"{\"a\":-}", 6},                     // and a minus
      {"{\"a\":tru}", 8},                   //
      {"{\"a\":nul1}", 8},                  //
      {"{\"a\":\"\x01\"}", 6},              // raw control characters
      {"{\"a\":\"\\q\"}", 7},               // unknown escape
      {"{\"a\":\"\\u12g4\"}", 10},          // not hex
      {"{\"a\":\"\\udc00\"}", 9},           // a lone low surrogate, refused at its 2nd digit
      {"{\"a\":\"\\ud800x\"}", 12},         // a high surrogate needs its low half
      {"{\"a\":\"\\ud800\\u0041\"}", 14},   // ... a low one
      {"{\"a\":\"\xc0\x80\"}", 6},          // overlong UTF-8
      {"{\"a\":\"\xed\xa0\x80\"}", 7},      // a UTF-16 surrogate in UTF-8
      {"{\"a\":\"\xf4\x90\x80\x80\"}", 7},  // past U+10FFFF
      {"{\"a\":\"\xe6\x97\"}", 8},          // a truncated code point
      {"{\"a\":\"\x80\"}", 6},              // a stray continuation byte
      {"{\"a\":1}}", 7},                    // nothing after the object
      {"{\"a\":1} x", 8},                   //
      {"{\"a\":1]", 6},                     // mismatched close
      {"{\"a\":[1}", 7},                    //
      {"{,}", 1},                           //
      {"{\"a\":1,}", 7},                    // trailing commas
      {"{\"a\":[1,]}", 8},                  //
      {"{1:2}", 1},                         // keys are strings
  };
  for (const auto& [text, at] : cases) {
    EXPECT_EQ(FirstRefused(text), at) << text;
    if (at < static_cast<int>(text.size())) {
      // The bytes before the refused one are a valid prefix.
      EXPECT_EQ(FirstRefused(text.substr(0, at)), -1) << text;
    }
  }
}

TEST(JsonPrefixTest, BoundsNestingWhitespaceRunsAndNumberLength) {
  // The top-level object is depth 1: 63 arrays inside it fit, a 64th does not.
  std::string deep = "{\"a\":" + std::string(JsonPrefix::kMaxDepth - 1, '[');
  JsonPrefix state;
  ASSERT_EQ(FirstRefused(deep, &state), -1);
  EXPECT_FALSE(JsonPrefix(state).Feed('['));
  EXPECT_FALSE(JsonPrefix(state).Feed('{'));
  EXPECT_EQ(FirstRefused(deep + std::string(JsonPrefix::kMaxDepth - 1, ']') + "}", &state), -1);
  EXPECT_TRUE(state.complete());

  // One blank between tokens; a line break where printers put one, then an indentation of at
  // most 4 bytes per open container (24 in all).
  EXPECT_EQ(FirstRefused("{\"a\": 1, \"b\" :\t[ 1 ,2 ] }"), -1);
  EXPECT_EQ(FirstRefused("{  }"), 2);
  EXPECT_EQ(FirstRefused("{\"a\":  1}"), 6);
  EXPECT_EQ(FirstRefused("{\n  \"a\": 1,\n  \"b\": [\n    2\n  ]\n}\n"), -1);
  EXPECT_EQ(FirstRefused("{\n\t\"a\": [\n\t\t{\n\t\t\t\"b\": 1\n\t\t}\n\t]\n}"), -1);
  EXPECT_EQ(FirstRefused("{\n    \"a\":1}"), -1);
  EXPECT_EQ(FirstRefused("{\n     \"a\":1}"), 6);              // 5 bytes of indentation at depth 1
  EXPECT_EQ(FirstRefused("{\"a\":[[\n            1]]}"), -1);  // 12 at depth 3
  EXPECT_EQ(FirstRefused("{\"a\":[[\n             1]]}"), 20);
  std::string nested = "{\"a\":" + std::string(10, '[') + "\n";
  EXPECT_EQ(FirstRefused(nested + std::string(JsonPrefix::kMaxIndent, ' ') + "1"), -1);
  EXPECT_EQ(FirstRefused(nested + std::string(JsonPrefix::kMaxIndent + 1, ' ')),
            static_cast<int>(nested.size()) + JsonPrefix::kMaxIndent);
  EXPECT_EQ(FirstRefused("{\n\n}"), 2);       // one line break per run
  EXPECT_EQ(FirstRefused("{ \n}"), 2);        // ... at its start
  EXPECT_EQ(FirstRefused("{\"a\"\n:1}"), 4);  // no break between a key and its value
  EXPECT_EQ(FirstRefused("{\"a\":\n1}"), 5);
  EXPECT_EQ(FirstRefused("{\"a\":[\n1\n,\n2]}"), -1);  // arrays break anywhere
  EXPECT_EQ(FirstRefused("{\r\n}"), 1);
  EXPECT_EQ(FirstRefused(" {}"), -1);  // one blank before the object ("▁{"), no preamble
  EXPECT_EQ(FirstRefused("\n{}\n"), -1);
  EXPECT_EQ(FirstRefused("  {}"), 1);
  EXPECT_EQ(FirstRefused("\n {}"), 1);

  const std::string digits(JsonPrefix::kMaxNumberBytes, '7');
  EXPECT_EQ(FirstRefused("{\"a\":" + digits + "}"), -1);
  EXPECT_EQ(FirstRefused("{\"a\":" + digits + "7}"), 5 + JsonPrefix::kMaxNumberBytes);
  // A '.' or an 'e' is taken only with room left for the digit it needs.
  const std::string almost(JsonPrefix::kMaxNumberBytes - 1, '7');
  EXPECT_EQ(FirstRefused("{\"a\":" + almost + "."), 5 + JsonPrefix::kMaxNumberBytes - 1);
  EXPECT_EQ(FirstRefused("{\"a\":" + almost + "7}"), -1);
  EXPECT_EQ(FirstRefused("{\"a\":1e99, \"b\":-2.5E-12}"), -1);
  EXPECT_EQ(FirstRefused("{\"a\":1e999}"), 9);  // past a double's range
  EXPECT_EQ(FirstRefused("{\"a\":1e+100}"), 10);
}

// Walks choosing random accepted bytes (leaning toward ones that close things) never reach a
// state that takes no byte, and every walk that completes is a JSON object a real parser reads.
TEST(JsonPrefixTest, EveryAcceptedPrefixCanStillBeCompleted) {
  std::mt19937 rng(7);
  int completed = 0;
  for (int walk = 0; walk < 2000; walk++) {
    JsonPrefix state;
    bool dead_end = false;
    const std::string text = testing::RandomByteWalk(state, "\"}]0,:", rng, 400, &dead_end);
    ASSERT_FALSE(dead_end) << "dead end after " << nlohmann::json(text).dump();
    if (!state.complete()) continue;
    ++completed;
    const auto parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(parsed.is_discarded()) << text;
    EXPECT_TRUE(parsed.is_object()) << text;
  }
  EXPECT_GT(completed, 500);  // the walks do finish objects, so the parse check means something
}

using testing::PieceTokenizer;

TEST(MaskJsonLogitsTest, LeavesExactlyTheTokensThatContinueTheObject) {
  //                              0      1       2    3    4       5    6    7    8    9      10
  const PieceTokenizer tokenizer(
      {"<s>", "</s>", "{", "}", "\"a\"", ":", "1", "x", " ", "{\"", "}}"});
  const TokenBytes vocab(tokenizer);
  EXPECT_EQ(vocab.Of(0), "");  // BOS and EOS carry no bytes, whatever their pieces
  EXPECT_EQ(vocab.Of(1), "");
  EXPECT_EQ(vocab.Of(4), "\"a\"");

  const auto allowed = [&](std::string_view so_far) {
    JsonPrefix state;
    EXPECT_TRUE(state.Feed(so_far));
    std::vector<float> logits(13, 0.5f);  // 2 ids past the vocabulary
    const int left = MaskJsonLogits(state, vocab, logits);
    std::vector<int> ids;
    for (int id = 0; id < 13; id++) {
      if (!std::isinf(logits[id])) {
        EXPECT_EQ(logits[id], 0.5f);  // kept logits are untouched
        ids.push_back(id);
      } else {
        EXPECT_LT(logits[id], 0);
      }
    }
    EXPECT_EQ(left, static_cast<int>(ids.size()));
    return ids;
  };
  EXPECT_EQ(allowed(""), (std::vector<int>{2, 8, 9}));
  EXPECT_EQ(allowed("{"), (std::vector<int>{3, 4, 8}));
  EXPECT_EQ(allowed("{\"a\""), (std::vector<int>{5, 8}));
  EXPECT_EQ(allowed("{\"a\":"), (std::vector<int>{2, 4, 6, 8, 9}));
  EXPECT_EQ(allowed("{\"a\":{\"a\":1"), (std::vector<int>{3, 6, 8, 10}));
  // "a" would close the string and go on with a: refused.
  EXPECT_EQ(allowed("{\"a\":\""), (std::vector<int>{2, 3, 5, 6, 7, 8, 9, 10}));
}

// The mask (with its shortcut for plain text inside strings) leaves exactly the tokens that
// JsonPrefix takes byte by byte, in every state random walks reach, on a vocabulary of every
// byte and multi-byte pieces of every kind.
TEST(MaskJsonLogitsTest, AgreesWithFeedingEveryTokenInEveryStateAWalkReaches) {
  testing::ExpectMaskAgreesWithFeeding(
      testing::EveryByteAnd({"hello",    " world",   "\"",   "\":",  "\",",   "\"}", "{\"",
                             "[{",       "}]",       "},",   "\\n",  "\\u00", "e9",  "\\ud83d",
                             "\\ude42",  "1.5",      "e+",   "true", "fal",   "se",  "null",
                             "\xc3\xa9", "\xe6\x97", "\xa5", "  ",   "\n  ",  "\t"}),
      JsonPrefix(), 150, 120, 11);
}

}  // namespace
}  // namespace smallmind::worker
