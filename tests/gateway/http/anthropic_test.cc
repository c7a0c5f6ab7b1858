// The Anthropic door's pure parts: request translation into the OpenAI chat request, the
// response body and stream events, and the error shapes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gateway/http/anthropic_error.h"
#include "gateway/http/anthropic_format.h"
#include "gateway/http/anthropic_request.h"

namespace smallmind::gateway::http {
namespace {

using Json = nlohmann::ordered_json;
using smallmind::v1::GenerateResponse;

std::optional<AnthropicRequest> Parse(const std::string& body, HttpError* error) {
  return ParseAnthropicRequest(body, AnthropicRoute::kMessages, error);
}

GenerateResponse Message(const std::string& text, smallmind::v1::FinishReason finish =
                                                      smallmind::v1::FINISH_REASON_UNSPECIFIED) {
  GenerateResponse m;
  m.set_text(text);
  if (finish != smallmind::v1::FINISH_REASON_UNSPECIFIED) {
    m.set_finish_reason(finish);
    m.mutable_usage()->set_prompt_tokens(10);
    m.mutable_usage()->set_cached_prompt_tokens(4);
    m.mutable_usage()->set_completion_tokens(3);
  }
  return m;
}

ResponseShape Shape() {
  ResponseShape s;
  s.endpoint = Endpoint::kChatCompletions;
  s.id = "msg_1";
  s.model = "m";
  s.tool_call_id = "toolu_1";
  return s;
}

// The `type`s of a stream's events, in order, from their `event:` lines.
std::vector<std::string> EventNames(const std::string& stream) {
  std::vector<std::string> names;
  for (size_t at = stream.find("event: "); at != std::string::npos;
       at = stream.find("event: ", at + 1)) {
    names.push_back(stream.substr(at + 7, stream.find('\n', at) - at - 7));
  }
  return names;
}

TEST(AnthropicRequestTest, SystemBlocksToolUseAndToolResultBecomeOpenAiMessages) {
  HttpError error;
  auto r = Parse(R"({"model":"m","max_tokens":16,"system":[{"type":"text","text":"Be brief."}],
    "stop_sequences":["END"],"temperature":0.5,"top_k":3,"metadata":{"user_id":"u"},
    "tools":[{"name":"get_weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}}],
    "tool_choice":{"type":"auto"},
    "messages":[{"role":"user","content":"Weather in Paris?"},
      {"role":"assistant","content":[{"type":"text","text":"Checking."},
        {"type":"tool_use","id":"toolu_a","name":"get_weather","input":{"city":"Paris"}}]},
      {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":"sunny"},
        {"type":"text","text":"Thanks"}]}]})",
                 &error);
  ASSERT_TRUE(r) << error.message;
  const Json& m = r->chat.messages;
  ASSERT_EQ(m.size(), 5u) << m.dump();
  EXPECT_EQ(m[0], (Json{{"role", "system"}, {"content", "Be brief."}}));
  EXPECT_EQ(m[2]["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(m[2]["tool_calls"][0]["function"]["arguments"], R"({"city":"Paris"})");
  EXPECT_EQ(m[2]["content"], "Checking.");
  EXPECT_EQ(m[3], (Json{{"role", "tool"},
                        {"tool_call_id", "toolu_a"},
                        {"content", "sunny"},
                        {"name", "get_weather"}}));
  EXPECT_EQ(m[4]["role"], "user");
  EXPECT_EQ(r->chat.tool_functions, std::vector<std::string>{"get_weather"});
  EXPECT_EQ(r->chat.generate.stopping().max_new_tokens(), 16u);
  EXPECT_EQ(r->chat.generate.stopping().stop(0), "END");
  EXPECT_EQ(r->chat.generate.sampling().top_k(), 3u);
  EXPECT_EQ(r->stop_sequences, std::vector<std::string>{"END"});
}

TEST(AnthropicRequestTest, ToolChoiceToolForcesTheCallAndAnyAmongSeveralPicksOne) {
  HttpError error;
  const std::string tools =
      R"("tools":[{"name":"a","input_schema":{"type":"object"}},{"name":"b"}],)";
  auto forced = Parse(
      R"({"max_tokens":8,)" + tools +
          R"("tool_choice":{"type":"tool","name":"b"},"messages":[{"role":"user","content":"x"}]})",
      &error);
  ASSERT_TRUE(forced) << error.message;
  EXPECT_EQ(forced->chat.tool_name, "b");
  auto any =
      Parse(R"({"max_tokens":8,)" + tools +
                R"("tool_choice":{"type":"any"},"messages":[{"role":"user","content":"x"}]})",
            &error);
  ASSERT_TRUE(any) << error.message;
  EXPECT_TRUE(any->chat.tool_from_output);
  auto none =
      Parse(R"({"max_tokens":8,)" + tools +
                R"("tool_choice":{"type":"none"},"messages":[{"role":"user","content":"x"}]})",
            &error);
  ASSERT_TRUE(none) << error.message;
  EXPECT_TRUE(none->chat.tool_choice_none);
}

TEST(AnthropicRequestTest, BadBodiesAre400sNamingTheField) {
  HttpError error;
  EXPECT_FALSE(Parse(R"({"messages":[{"role":"user","content":"x"}]})", &error));
  EXPECT_EQ(error.param, "max_tokens");
  EXPECT_FALSE(Parse(R"({"max_tokens":4,"messages":[{"role":"system","content":"x"}]})", &error));
  EXPECT_EQ(error.param, "messages");
  EXPECT_FALSE(Parse(
      R"({"max_tokens":4,"messages":[{"role":"user","content":[{"type":"image","source":{}}]}]})",
      &error));
  EXPECT_NE(error.message.find("images"), std::string::npos) << error.message;
  EXPECT_FALSE(
      Parse(R"({"max_tokens":4,"stop_sequences":"x","messages":[{"role":"user","content":"x"}]})",
            &error));
  EXPECT_EQ(error.param, "stop_sequences");
  EXPECT_FALSE(Parse(R"({"max_tokens":0,"messages":[{"role":"user","content":"x"}]})", &error));
  EXPECT_EQ(error.param, "max_tokens");
  EXPECT_FALSE(Parse(
      R"({"max_tokens":4,"messages":[{"role":"user","content":"x"},{"role":"assistant","content":"pre"}]})",
      &error));
  EXPECT_NE(error.message.find("prefill"), std::string::npos);
  // count_tokens needs no max_tokens.
  EXPECT_TRUE(ParseAnthropicRequest(R"({"messages":[{"role":"user","content":"x"}]})",
                                    AnthropicRoute::kCountTokens, &error));
}

TEST(AnthropicFormatTest, WholeMessageHasTextStopReasonAndUsage) {
  AnthropicFormatter f(Shape(), {"END"});
  f.Add(Message("Hello"));
  f.Add(Message(" world", smallmind::v1::STOP));
  const Json body = Json::parse(f.WholeBody({}));
  EXPECT_EQ(body["type"], "message");
  EXPECT_EQ(body["role"], "assistant");
  EXPECT_EQ(body["content"], Json::parse(R"([{"type":"text","text":"Hello world"}])"));
  EXPECT_EQ(body["stop_reason"], "stop_sequence");
  EXPECT_EQ(body["stop_sequence"], "END");
  EXPECT_EQ(body["usage"]["input_tokens"], 6);
  EXPECT_EQ(body["usage"]["cache_read_input_tokens"], 4);
  EXPECT_EQ(body["usage"]["output_tokens"], 3);
  AnthropicFormatter length(Shape(), {});
  length.Add(Message("x", smallmind::v1::LENGTH));
  EXPECT_EQ(Json::parse(length.WholeBody({}))["stop_reason"], "max_tokens");
}

TEST(AnthropicFormatTest, StreamIsMessageStartBlocksDeltaAndStop) {
  AnthropicFormatter f(Shape(), {});
  std::string s = f.StreamStart();
  s += f.StreamMessage(Message("Hi"));
  s += f.StreamMessage(Message(" there", smallmind::v1::EOS));
  s += f.EndStream({});
  EXPECT_EQ(EventNames(s),
            (std::vector<std::string>{"message_start", "ping", "content_block_start",
                                      "content_block_delta", "content_block_delta",
                                      "content_block_stop", "message_delta", "message_stop"}));
  EXPECT_NE(s.find(R"("delta":{"type":"text_delta","text":" there"})"), std::string::npos) << s;
  EXPECT_NE(s.find(R"("delta":{"stop_reason":"end_turn","stop_sequence":null})"), std::string::npos)
      << s;
}

TEST(AnthropicFormatTest, ThinkingIsItsOwnBlockBeforeTheText) {
  ResponseShape shape = Shape();
  shape.reasoning = true;
  AnthropicFormatter whole(shape, {});
  whole.Add(Message("<think>hmm</think>Yes", smallmind::v1::EOS));
  EXPECT_EQ(Json::parse(whole.WholeBody({}))["content"],
            Json::parse(R"([{"type":"thinking","thinking":"hmm","signature":""},
                            {"type":"text","text":"Yes"}])"));
  AnthropicFormatter stream(shape, {});
  std::string s = stream.StreamStart();
  s += stream.StreamMessage(Message("<think>hmm</think>"));
  s += stream.StreamMessage(Message("Yes", smallmind::v1::EOS));
  EXPECT_NE(s.find(R"("delta":{"type":"thinking_delta","thinking":"hmm"})"), std::string::npos)
      << s;
  EXPECT_NE(s.find(R"({"type":"content_block_start","index":1,"content_block":{"type":"text")"),
            std::string::npos)
      << s;
}

// gpt-oss: the analysis channel is a thinking block, the final channel text, a message to an
// offered function a tool_use block (stop_reason tool_use), whole and streamed.
TEST(AnthropicFormatTest, HarmonyChannelsAreThinkingTextAndToolUse) {
  ResponseShape shape = Shape();
  shape.harmony = true;
  shape.tool_functions = {"get_weather"};
  const std::string reply =
      "<|channel|>analysis<|message|>hmm<|end|><|start|>assistant<|channel|>final<|message|>Yes";
  AnthropicFormatter whole(shape, {});
  whole.Add(Message(reply, smallmind::v1::EOS));
  EXPECT_EQ(Json::parse(whole.WholeBody({}))["content"],
            Json::parse(R"([{"type":"thinking","thinking":"hmm","signature":""},
                            {"type":"text","text":"Yes"}])"));
  AnthropicFormatter call(shape, {});
  std::string s = call.StreamStart();
  s += call.StreamMessage(Message("<|channel|>analysis<|message|>hmm<|end|><|start|>assistant"));
  s += call.StreamMessage(Message("<|channel|>commentary to=functions.get_weather <|constrain|>"));
  s += call.StreamMessage(Message(R"(json<|message|>{"city":"Paris"})", smallmind::v1::EOS));
  s += call.EndStream({});
  EXPECT_NE(s.find(R"("delta":{"type":"thinking_delta","thinking":"hmm"})"), std::string::npos)
      << s;
  EXPECT_NE(s.find(R"("content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather")"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find(R"("stop_reason":"tool_use")"), std::string::npos) << s;
}

TEST(AnthropicFormatTest, AForcedCallIsAToolUseBlockWholeOrStreamed) {
  ResponseShape shape = Shape();
  shape.tool_name = "get_weather";
  AnthropicFormatter whole(shape, {});
  whole.Add(Message(R"({"city":)"));
  whole.Add(Message(R"("Paris"})", smallmind::v1::EOS));
  const Json body = Json::parse(whole.WholeBody({}));
  EXPECT_EQ(body["content"], Json::parse(R"([{"type":"tool_use","id":"toolu_1",
      "name":"get_weather","input":{"city":"Paris"}}])"));
  EXPECT_EQ(body["stop_reason"], "tool_use");
  AnthropicFormatter stream(shape, {});
  std::string s = stream.StreamStart();
  s += stream.StreamMessage(Message(R"({"city":)"));
  s += stream.StreamMessage(Message(R"("Paris"})", smallmind::v1::EOS));
  s += stream.EndStream({});
  EXPECT_NE(
      s.find(
          R"("content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}})"),
      std::string::npos)
      << s;
  EXPECT_NE(s.find(R"("delta":{"type":"input_json_delta","partial_json":"{\"city\":"})"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find(R"("stop_reason":"tool_use")"), std::string::npos) << s;
}

TEST(AnthropicErrorTest, ErrorsAreAnthropicShapedWithItsTypes) {
  const Json body = Json::parse(AnthropicErrorBody(MakeError(400, "bad")));
  EXPECT_EQ(body, Json::parse(R"({"type":"error","error":{"type":"invalid_request_error",
                                   "message":"bad"}})"));
  EXPECT_STREQ(AnthropicErrorType(401), "authentication_error");
  EXPECT_STREQ(AnthropicErrorType(404), "not_found_error");
  EXPECT_STREQ(AnthropicErrorType(429), "rate_limit_error");
  EXPECT_STREQ(AnthropicErrorType(503), "overloaded_error");
  EXPECT_STREQ(AnthropicErrorType(500), "api_error");
  EXPECT_EQ(AnthropicErrorEvent(MakeError(503, "x")).rfind("event: error\ndata: ", 0), 0u);
}

}  // namespace
}  // namespace smallmind::gateway::http
