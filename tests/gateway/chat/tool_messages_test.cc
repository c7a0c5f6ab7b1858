// The agent round trip the OpenAI SDKs send after every tool call: an assistant message with
// `content: null` and `tool_calls` (arguments as JSON text), then a `tool` message with the
// result, through the built-in ChatML fallback and real Hugging Face templates (expected texts
// rendered by jinja2 3.1.2 as transformers sets it up, ../shared/chat-templates/README.md).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "gateway/chat/chat_template.h"
#include "gateway/chat/tool_arguments.h"
#include "tests/testing/shared_data.h"

namespace smallmind::gateway {
namespace {

using nlohmann::ordered_json;

// What the openai client sends back after the model called get_weather.
ordered_json RoundTrip(ordered_json assistant_content = nullptr) {
  return ordered_json::parse(R"([
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
      "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\", \"days\": 2}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\": 21}"}])")
      .patch(ordered_json::array(
          {{{"op", "replace"}, {"path", "/1/content"}, {"value", assistant_content}}}));
}

ChatRenderInput Input(ordered_json messages, std::string bos = "", std::string eos = "") {
  ChatRenderInput in;
  in.messages = std::move(messages);
  in.bos_token = std::move(bos);
  in.eos_token = std::move(eos);
  in.add_generation_prompt = true;
  in.now = std::chrono::sys_days(std::chrono::year{2026} / 1 / 15);
  return in;
}

std::string Render(const ChatTemplate& t, const ChatRenderInput& in) {
  auto out = t.Render(in);
  return out.ok() ? out.value() : "ERROR: " + out.status().message();
}

ChatTemplate Parsed(const std::string& source) {
  auto t = ChatTemplate::Parse(source);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(t).value();
}

std::string SharedTemplate(const std::string& name) {
  std::ifstream in(testing::SharedDataPath("chat-templates/" + name), std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

constexpr char kChatMlRoundTrip[] =
    "<|im_start|>user\nWeather in Paris?<|im_end|>\n"
    "<|im_start|>assistant\n<tool_call>\n"
    "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}\n"
    "</tool_call><|im_end|>\n"
    "<|im_start|>user\n<tool_response>\n{\"temp\": 21}\n</tool_response><|im_end|>\n"
    "<|im_start|>assistant\n";

TEST(ToolMessagesTest, ChatMlFallbackWritesNullContentToolCallsAndToolResults) {
  const ChatTemplate t = Parsed(std::string(ChatMlTemplate()));
  EXPECT_EQ(t.tool_arguments(), ToolArguments::kAsGiven);  // it prints JSON text as it is
  EXPECT_EQ(Render(t, Input(RoundTrip())), kChatMlRoundTrip);
}

TEST(ToolMessagesTest, ChatMlFallbackKeepsToolCallsBesideEmptyOrRealContent) {
  const ChatTemplate t = Parsed(std::string(ChatMlTemplate()));
  EXPECT_EQ(Render(t, Input(RoundTrip(""))), kChatMlRoundTrip);  // "" used to drop the calls
  const std::string with_text = Render(t, Input(RoundTrip("Let me look.")));
  EXPECT_NE(with_text.find("<|im_start|>assistant\nLet me look.\n<tool_call>\n{\"name\": "
                           "\"get_weather\""),
            std::string::npos)
      << with_text;
}

TEST(ToolMessagesTest, ChatMlFallbackDoesNotListTheTools) {
  const ChatTemplate t = Parsed(std::string(ChatMlTemplate()));
  ChatRenderInput in = Input(ordered_json::parse(
      R"([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}])"));
  const std::string without = Render(t, in);
  in.tools = ordered_json::parse(
      R"([{"type": "function", "function": {"name": "get_weather", "parameters": {}}}])");
  EXPECT_EQ(Render(t, in), without);
  EXPECT_EQ(without,
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\n");
}

TEST(ToolMessagesTest, ConsecutiveToolResultsShareOneUserTurn) {
  const ChatTemplate t = Parsed(std::string(ChatMlTemplate()));
  ordered_json m = RoundTrip();
  m.push_back({{"role", "tool"}, {"tool_call_id", "call_2"}, {"content", nullptr}});
  EXPECT_NE(Render(t, Input(m))
                .find("<|im_start|>user\n<tool_response>\n{\"temp\": 21}\n"
                      "</tool_response>\n<tool_response>\n\n</tool_response>"
                      "<|im_end|>\n<|im_start|>assistant\n"),
            std::string::npos);
}

TEST(ToolMessagesTest, QwenTemplateGetsTheArgumentsAsAnObject) {
  SM_REQUIRE_SHARED_DATA("chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja");
  const ChatTemplate t = Parsed(SharedTemplate("Qwen-Qwen2.5-7B-Instruct.jinja"));
  EXPECT_EQ(t.tool_arguments(), ToolArguments::kObject);  // it prints `arguments | tojson`
  EXPECT_EQ(Render(t, Input(RoundTrip(), "", "<|im_end|>")),
            "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
            "assistant.<|im_end|>\n<|im_start|>user\nWeather in Paris?<|im_end|>\n"
            "<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
            "{\"city\": \"Paris\", \"days\": 2}}\n</tool_call><|im_end|>\n<|im_start|>user\n"
            "<tool_response>\n{\"temp\": 21}\n</tool_response><|im_end|>\n"
            "<|im_start|>assistant\n");
}

TEST(ToolMessagesTest, Llama32TemplateGetsTheArgumentsAsAnObject) {
  SM_REQUIRE_SHARED_DATA("chat-templates/meta-llama-Llama-3.2-3B-Instruct.jinja");
  const ChatTemplate t = Parsed(SharedTemplate("meta-llama-Llama-3.2-3B-Instruct.jinja"));
  EXPECT_EQ(t.tool_arguments(), ToolArguments::kObject);
  EXPECT_EQ(Render(t, Input(RoundTrip(), "<|begin_of_text|>", "<|eot_id|>")),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge "
            "Date: December 2023\nToday Date: 15 Jan 2026\n\n<|eot_id|><|start_header_id|>user"
            "<|end_header_id|>\n\nWeather in Paris?<|eot_id|><|start_header_id|>assistant"
            "<|end_header_id|>\n\n{\"name\": \"get_weather\", \"parameters\": {\"city\": "
            "\"Paris\", \"days\": 2}}<|eot_id|><|start_header_id|>ipython<|end_header_id|>\n\n"
            "\"{\\\"temp\\\": 21}\"<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ToolMessagesTest, TemplatesThatPrintTheTextGetItAsSent) {
  const ChatTemplate t = Parsed(
      "{% for m in messages %}{% for c in m.tool_calls or [] %}{{ c.function.arguments }}"
      "{% endfor %}{% endfor %}");
  EXPECT_EQ(t.tool_arguments(), ToolArguments::kAsGiven);
  EXPECT_EQ(Render(t, Input(RoundTrip())), "{\"city\": \"Paris\", \"days\": 2}");
}

TEST(ToolMessagesTest, OnlyJsonObjectTextBecomesAnObject) {
  const ordered_json messages = ordered_json::parse(R"([
    {"role": "assistant", "tool_calls": [
      {"function": {"name": "a", "arguments": "{\"z\": 1, \"a\": [2]}"}},
      {"function": {"name": "b", "arguments": "{\"cut\": "}},
      {"function": {"name": "c", "arguments": "[1]"}},
      {"function": {"name": "d", "arguments": {"already": true}}},
      {"function": {"name": "e"}}, "not a call"]},
    {"role": "user", "content": "x"}])");
  const ordered_json out = PrepareToolArguments(messages, ToolArguments::kObject);
  const ordered_json& calls = out[0]["tool_calls"];
  EXPECT_EQ(calls[0]["function"]["arguments"].dump(), R"({"z":1,"a":[2]})");  // key order kept
  EXPECT_EQ(calls[1]["function"]["arguments"], "{\"cut\": ");
  EXPECT_EQ(calls[2]["function"]["arguments"], "[1]");
  EXPECT_EQ(calls[3]["function"]["arguments"], ordered_json({{"already", true}}));
  EXPECT_FALSE(calls[4]["function"].contains("arguments"));
  EXPECT_EQ(out[1], messages[1]);
  EXPECT_EQ(PrepareToolArguments(messages, ToolArguments::kAsGiven), messages);
}

TEST(ToolMessagesTest, ArgumentsNestedPastTheBodyLimitStayText) {
  const std::string deep = std::string(300, '[') + std::string(300, ']');
  const ordered_json messages = ordered_json::array(
      {{{"role", "assistant"},
        {"tool_calls",
         {{{"function", {{"name", "f"}, {"arguments", "{\"a\": " + deep + "}"}}}}}}}});
  const ordered_json out = PrepareToolArguments(messages, ToolArguments::kObject);
  EXPECT_TRUE(out[0]["tool_calls"][0]["function"]["arguments"].is_string());
}

}  // namespace
}  // namespace smallmind::gateway
