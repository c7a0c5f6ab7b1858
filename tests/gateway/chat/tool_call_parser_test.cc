// ToolCallParser on replies of each syntax as models write them: calls amid text (Hermes), whole
// replies of calls (Llama 3, Mistral), and everything that is not a call of an offered function
// coming back as text byte for byte. Every reply is also fed in pieces split at every byte, and
// must give the same text and calls as fed whole.
#include "gateway/chat/tool_call_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace smallmind::gateway::http {
namespace {

const std::vector<std::string> kFunctions = {"get_weather", "add"};

using Result = ToolCallOutput;

Result Whole(ToolCallSyntax syntax, const std::string& reply) {
  ToolCallParser p(syntax, kFunctions);
  Result r;
  r.Append(p.Feed(reply));
  r.Append(p.Finish());
  return r;
}

// The same reply in pieces: cut once at each byte, and byte by byte.
void ExpectPiecesGiveTheSame(ToolCallSyntax syntax, const std::string& reply) {
  const Result whole = Whole(syntax, reply);
  for (size_t cut = 0; cut <= reply.size(); ++cut) {
    ToolCallParser p(syntax, kFunctions);
    Result r;
    r.Append(p.Feed(reply.substr(0, cut)));
    r.Append(p.Feed(reply.substr(cut)));
    r.Append(p.Finish());
    ASSERT_EQ(r.content, whole.content) << "cut at " << cut << " of " << reply;
    ASSERT_EQ(r.calls.size(), whole.calls.size()) << "cut at " << cut << " of " << reply;
  }
  ToolCallParser p(syntax, kFunctions);
  Result r;
  for (char c : reply) r.Append(p.Feed(std::string(1, c)));
  r.Append(p.Finish());
  EXPECT_EQ(r.content, whole.content) << reply;
  ASSERT_EQ(r.calls.size(), whole.calls.size()) << reply;
  for (size_t i = 0; i < r.calls.size(); ++i) {
    EXPECT_EQ(r.calls[i].name, whole.calls[i].name);
    EXPECT_EQ(r.calls[i].arguments, whole.calls[i].arguments);
  }
}

TEST(ToolCallParserTest, HermesCallsAmidTextBecomeCallsAndTheTextStays) {
  const std::string reply =
      "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
      "\"Paris\", \"unit\": \"c\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"add\", "
      "\"arguments\": {\"a\": 1, \"b\": 2.5}}\n</tool_call>";
  const Result r = Whole(ToolCallSyntax::kHermes, reply);
  EXPECT_EQ(r.content, "Let me check.");
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[0].name, "get_weather");
  EXPECT_EQ(r.calls[0].arguments, R"({"city":"Paris","unit":"c"})");
  EXPECT_EQ(r.calls[1].name, "add");
  EXPECT_EQ(r.calls[1].arguments, R"({"a":1,"b":2.5})");
  ExpectPiecesGiveTheSame(ToolCallSyntax::kHermes, reply);
}

TEST(ToolCallParserTest, HermesReleasesTextAsItComesAndHoldsOnlyAPossibleTag) {
  ToolCallParser p(ToolCallSyntax::kHermes, kFunctions);
  // "<" may open a tag, and blanks before a call are dropped: both wait.
  EXPECT_EQ(p.Feed("The answer is 4 <").content, "The answer is 4");
  EXPECT_EQ(p.Feed("tool").content, "");
  EXPECT_EQ(p.Feed("s> are").content, " <tools> are");  // it was no tag
  ToolCallOutput end = p.Finish();
  EXPECT_EQ(end.content, "");
  EXPECT_TRUE(end.calls.empty());
}

TEST(ToolCallParserTest, HermesBlanksBesideCallsAreDropped) {
  const Result r = Whole(ToolCallSyntax::kHermes,
                         "\n<tool_call>{\"name\":\"add\",\"arguments\":{}}</tool_call>\n\n");
  EXPECT_EQ(r.content, "");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, "{}");
  EXPECT_EQ(Whole(ToolCallSyntax::kHermes, "\n\n").content, "\n\n");  // no call: kept
}

TEST(ToolCallParserTest, WhatIsNoCallOfAnOfferedFunctionStaysTextByteForByte) {
  for (const std::string& reply : {
           // An unknown function, broken JSON, arguments that are no object, no name.
           std::string("<tool_call>{\"name\": \"delete_all\", \"arguments\": {}}</tool_call>"),
           std::string("x <tool_call>{\"name\": \"add\", \"arguments\": {\"a\": </tool_call> y"),
           std::string("<tool_call>{\"name\": \"add\", \"arguments\": [1, 2]}</tool_call>"),
           std::string("<tool_call>{\"arguments\": {}}</tool_call>"),
           // Cut short inside the call.
           std::string("Sure. <tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\""),
           // A tag that never opens.
           std::string("a <tool_c"),
       }) {
    const Result r = Whole(ToolCallSyntax::kHermes, reply);
    EXPECT_EQ(r.content, reply);
    EXPECT_TRUE(r.calls.empty()) << reply;
    ExpectPiecesGiveTheSame(ToolCallSyntax::kHermes, reply);
  }
}

TEST(ToolCallParserTest, HermesCallCutShortAfterItsJsonStillCounts) {
  // The output ended (max_tokens, a stop string) before </tool_call>, the JSON whole.
  const Result r =
      Whole(ToolCallSyntax::kHermes, "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1}}");
  EXPECT_EQ(r.content, "");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, R"({"a":1})");
}

TEST(ToolCallParserTest, ArgumentsWrittenAsAStringOfJsonAreRead) {
  const Result r = Whole(ToolCallSyntax::kHermes,
                         R"(<tool_call>{"name": "add", "arguments": "{\"a\": 3}"}</tool_call>)");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, R"({"a":3})");
}

TEST(ToolCallParserTest, Llama3ReplyOfCallsBecomesCalls) {
  const std::string one = R"({"name": "get_weather", "parameters": {"city": "Oslo"}})";
  Result r = Whole(ToolCallSyntax::kLlama3Json, one);
  EXPECT_EQ(r.content, "");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].name, "get_weather");
  EXPECT_EQ(r.calls[0].arguments, R"({"city":"Oslo"})");
  ExpectPiecesGiveTheSame(ToolCallSyntax::kLlama3Json, one);

  const std::string two =
      " {\"name\": \"add\", \"parameters\": {\"a\": \"x;y\"}}; {\"name\": \"add\", "
      "\"arguments\": {\"b\": 2}}\n";
  r = Whole(ToolCallSyntax::kLlama3Json, two);
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[0].arguments, R"({"a":"x;y"})");  // a ';' inside a string splits nothing
  EXPECT_EQ(r.calls[1].arguments, R"({"b":2})");
  ExpectPiecesGiveTheSame(ToolCallSyntax::kLlama3Json, two);
}

TEST(ToolCallParserTest, Llama3TextStreamsAtOnceAndJsonThatIsNoCallStaysText) {
  ToolCallParser p(ToolCallSyntax::kLlama3Json, kFunctions);
  EXPECT_EQ(p.Feed("\n").content, "");  // blanks: undecided
  EXPECT_EQ(p.Feed("It is sunny").content, "\nIt is sunny");
  EXPECT_EQ(p.Feed(" {in Oslo}").content, " {in Oslo}");  // text from now on
  EXPECT_EQ(p.Finish().content, "");

  for (const std::string& reply : {std::string(R"({"answer": 42})"),
                                   std::string(R"({"name": "add", "parameters": {}} and more)"),
                                   std::string(R"({"name": "add", "parameters": {"a")")}) {
    const Result r = Whole(ToolCallSyntax::kLlama3Json, reply);
    EXPECT_EQ(r.content, reply);
    EXPECT_TRUE(r.calls.empty()) << reply;
  }
}

TEST(ToolCallParserTest, MistralArrayOfCallsWithOrWithoutItsMarker) {
  for (const std::string& reply :
       {std::string(R"([TOOL_CALLS][{"name": "add", "arguments": {"a": 1}, "id": "abcdefghi"}, )"
                    R"({"name": "get_weather", "arguments": {"city": "Rome"}}])"),
        std::string(R"([{"name": "add", "arguments": {"a": 1}}, )"
                    R"({"name": "get_weather", "arguments": {"city": "Rome"}}])")}) {
    const Result r = Whole(ToolCallSyntax::kMistral, reply);
    EXPECT_EQ(r.content, "");
    ASSERT_EQ(r.calls.size(), 2u) << reply;
    EXPECT_EQ(r.calls[0].name, "add");
    EXPECT_EQ(r.calls[0].arguments, R"({"a":1})");
    EXPECT_EQ(r.calls[1].name, "get_weather");
    ExpectPiecesGiveTheSame(ToolCallSyntax::kMistral, reply);
  }
  for (const std::string& reply :
       {std::string("[1, 2, 3]"), std::string("Rome is sunny."),
        std::string(R"([{"name": "nope", "arguments": {}}])"), std::string("[]")}) {
    const Result r = Whole(ToolCallSyntax::kMistral, reply);
    EXPECT_EQ(r.content, reply);
    EXPECT_TRUE(r.calls.empty()) << reply;
  }
}

TEST(ToolCallParserTest, NoSyntaxPassesEverythingThrough) {
  const std::string reply = R"(<tool_call>{"name": "add", "arguments": {}}</tool_call>)";
  ToolCallParser p(ToolCallSyntax::kNone, kFunctions);
  EXPECT_EQ(p.Feed(reply).content, reply);
  EXPECT_EQ(p.Finish().content, "");
}

}  // namespace
}  // namespace smallmind::gateway::http
