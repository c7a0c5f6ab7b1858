#include "gateway/chat/harmony_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace smallmind::gateway::http {
namespace {

const std::vector<std::string> kTools = {"get_weather"};

// The whole reply fed in pieces of `step` bytes, then Finish.
HarmonyOutput Parse(const std::string& reply, size_t step = 0) {
  HarmonyParser parser(kTools);
  HarmonyOutput out;
  if (step == 0) step = reply.size() + 1;
  for (size_t i = 0; i < reply.size(); i += step) out.Append(parser.Feed(reply.substr(i, step)));
  out.Append(parser.Finish());
  return out;
}

TEST(HarmonyParserTest, AnalysisIsReasoningFinalIsContent) {
  const std::string reply =
      "<|channel|>analysis<|message|>User says hi. Reply.<|end|>"
      "<|start|>assistant<|channel|>final<|message|>Hello! How can I help?<|return|>";
  for (size_t step : {0, 1, 2, 3, 7}) {
    const HarmonyOutput out = Parse(reply, step);
    EXPECT_EQ(out.reasoning, "User says hi. Reply.") << step;
    EXPECT_EQ(out.content, "Hello! How can I help?") << step;
    EXPECT_TRUE(out.calls.empty());
  }
}

TEST(HarmonyParserTest, TextStreamsAndOnlyAPossibleMarkerWaits) {
  HarmonyParser parser(kTools);
  EXPECT_EQ(parser.Feed("<|channel|>analy").reasoning, "");
  HarmonyOutput a = parser.Feed("sis<|message|>Think<|e");
  EXPECT_EQ(a.reasoning, "Think");
  HarmonyOutput b = parser.Feed("nd|><|start|>assistant<|channel|>final<|message|>Hi <|");
  EXPECT_EQ(b.reasoning, "");
  EXPECT_EQ(b.content, "Hi ");
  HarmonyOutput c = parser.Feed("there");  // "<|" was no marker after all
  EXPECT_EQ(c.content, "<|there");
  EXPECT_EQ(parser.Finish().content, "");
}

TEST(HarmonyParserTest, CommentaryToAFunctionIsACall) {
  const std::string reply =
      "<|channel|>analysis<|message|>Need weather.<|end|>"
      "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
      "<|message|>{\"location\": \"Paris\", \"unit\": \"c\"}<|call|>";
  for (size_t step : {0, 1, 5}) {
    const HarmonyOutput out = Parse(reply, step);
    EXPECT_EQ(out.reasoning, "Need weather.");
    EXPECT_EQ(out.content, "");
    ASSERT_EQ(out.calls.size(), 1u) << step;
    EXPECT_EQ(out.calls[0].name, "get_weather");
    EXPECT_EQ(out.calls[0].arguments, R"({"location":"Paris","unit":"c"})");
  }
}

TEST(HarmonyParserTest, RecipientBeforeTheChannelAsTheTemplateWritesIt) {
  const HarmonyOutput out = Parse(
      "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>"
      "{\"location\":\"Oslo\"}<|call|>");
  ASSERT_EQ(out.calls.size(), 1u);
  EXPECT_EQ(out.calls[0].arguments, R"({"location":"Oslo"})");
}

TEST(HarmonyParserTest, CallCutAtItsStopTokenStillParses) {
  // <|call|> is the stop token: the worker ends the output without its text.
  const HarmonyOutput out =
      Parse("<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{}", 4);
  ASSERT_EQ(out.calls.size(), 1u);
  EXPECT_EQ(out.calls[0].arguments, "{}");
}

TEST(HarmonyParserTest, CallsThatDoNotParseStayText) {
  const std::string head = "<|channel|>commentary to=functions.";
  EXPECT_EQ(Parse(head + "other json<|message|>{\"a\":1}<|call|>").content, "{\"a\":1}");
  EXPECT_EQ(Parse(head + "get_weather json<|message|>{broken<|call|>").content, "{broken");
  EXPECT_EQ(Parse(head + "get_weather json<|message|>[1]<|call|>").content, "[1]");
  EXPECT_TRUE(Parse(head + "get_weather json<|message|>[1]<|call|>").calls.empty());
}

TEST(HarmonyParserTest, PreambleOnCommentaryIsContent) {
  const HarmonyOutput out = Parse(
      "<|channel|>commentary<|message|>Checking the weather.<|end|><|start|>assistant"
      "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{}<|call|>");
  EXPECT_EQ(out.content, "Checking the weather.");
  EXPECT_EQ(out.calls.size(), 1u);
}

TEST(HarmonyParserTest, AReplyWithoutHarmonyIsAllContent) {
  for (size_t step : {0, 1}) {
    EXPECT_EQ(Parse("Just text, <|end|> and all.", step).content, "Just text, <|end|> and all.");
    EXPECT_EQ(Parse("<", step).content, "<");
  }
}

TEST(HarmonyParserTest, CutShortInsideAMessageKeepsItsText) {
  const HarmonyOutput out = Parse("<|channel|>analysis<|message|>Still thinking", 3);
  EXPECT_EQ(out.reasoning, "Still thinking");
  EXPECT_EQ(out.content, "");
}

TEST(HarmonyParserTest, TemplateDetection) {
  EXPECT_TRUE(TemplateSpeaksHarmony("{{- \"<|start|>assistant<|channel|>final<|message|>\" }}"));
  EXPECT_FALSE(TemplateSpeaksHarmony("<|im_start|>assistant\n<think>"));
}

}  // namespace
}  // namespace smallmind::gateway::http
