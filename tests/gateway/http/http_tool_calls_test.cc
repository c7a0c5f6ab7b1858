// Tool calls the model makes on its own (tool_choice "auto"), and a reasoning model's thinking
// (reasoning_content), through the HTTP door: an
// in-process Gateway with the HttpDoor and --tool-call-syntax, attached to a fake worker whose
// "say:" script writes back the user's text (tests/gateway/fake_worker.h), so the reply is
// exactly what a model of that family would write. Whole and streamed replies; tool_choice
// "none", an unknown function and "auto" over a template that teaches no syntax leave the text as
// it was; malformed tools are a 400.
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gateway/gateway.h"
#include "gateway/http/http_door.h"
#include "tests/gateway/fake_worker.h"
#include "tests/gateway/http/http_gateway.h"
#include "tests/http/http_client.h"
#include "tests/testing/scoped_temp_dir.h"

namespace smallmind::gateway::http {
namespace {

using gateway::testing::FakeWorker;
using nlohmann::json;
using smallmind::testing::HttpCall;
using smallmind::testing::HttpReply;

const json kTools = json::parse(R"([
  {"type": "function", "function": {"name": "get_weather", "description": "The weather.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}},
  {"type": "function", "function": {"name": "add", "description": "A sum."}}])");

class HttpToolCallsTest : public ::testing::Test {
 protected:
  // `chat_template` non-empty: served as --chat-template (else the fake model's none: ChatML).
  void Start(const std::string& syntax, const std::string& reasoning = "auto",
             const std::string& chat_template = "") {
    worker_ = std::make_unique<FakeWorker>(0, tmp_.File("w0.sock"));
    ASSERT_TRUE(worker_->started());
    GatewayConfig config = gateway::testing::OneWorkerConfig(*worker_);
    config.http.port = 0;
    if (!chat_template.empty()) {
      config.http.chat_template_file = tmp_.File("template.jinja");
      std::ofstream(config.http.chat_template_file) << chat_template;
    }
    config.http.tool_call_syntax = syntax;
    config.http.reasoning_format = reasoning;
    const shared::Status status = gateway::testing::StartWithHttpDoor(config, &gateway_, &door_);
    ASSERT_TRUE(status.ok()) << status.ToString();
  }
  void TearDown() override {
    if (gateway_) gateway_->Shutdown();
    if (worker_) worker_->Shutdown();
  }

  // A chat request whose reply (from the fake worker) is `reply`.
  HttpReply Chat(const std::string& reply, bool stream, const json& extra = json::object()) {
    json body{{"messages", {{{"role", "user"}, {"content", "say:" + reply}}}},
              {"tools", kTools},
              {"stream", stream}};
    body.update(extra);
    return HttpCall(door_->address(), "POST", "/v1/chat/completions", body.dump());
  }

  smallmind::testing::ScopedTempDir tmp_;
  std::unique_ptr<FakeWorker> worker_;
  std::unique_ptr<Gateway> gateway_;
  HttpDoor* door_ = nullptr;  // owned by gateway_
};

// The data of each event of an SSE body, [DONE] left out.
std::vector<json> Events(const std::string& body) {
  std::vector<json> events;
  for (size_t at = body.find("data: "); at != std::string::npos; at = body.find("data: ", at + 1)) {
    const size_t end = body.find("\n\n", at);
    const std::string data = body.substr(at + 6, end - at - 6);
    if (data != "[DONE]") events.push_back(json::parse(data));
  }
  return events;
}

const std::string kHermesReply =
    "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
    "</tool_call>\n<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 2, \"b\": 3}}\n"
    "</tool_call>";

TEST_F(HttpToolCallsTest, HermesCallsComeBackAsToolCallsWhole) {
  Start("hermes");
  const HttpReply reply = Chat(kHermesReply, /*stream=*/false);
  ASSERT_TRUE(reply.ok) << reply.error;
  ASSERT_EQ(reply.status, 200) << reply.body;
  const json choice = reply.json()["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "tool_calls");
  EXPECT_EQ(choice["message"]["content"], "Checking.");
  const json calls = choice["message"]["tool_calls"];
  ASSERT_EQ(calls.size(), 2u) << reply.body;
  EXPECT_EQ(calls[0]["type"], "function");
  EXPECT_EQ(calls[0]["function"]["name"], "get_weather");
  EXPECT_EQ(json::parse(calls[0]["function"]["arguments"].get<std::string>()),
            json::parse(R"({"city": "Paris"})"));
  EXPECT_EQ(calls[1]["function"]["name"], "add");
  EXPECT_EQ(calls[1]["function"]["arguments"], R"({"a":2,"b":3})");
  EXPECT_TRUE(calls[0]["id"].get<std::string>().starts_with("call_"));
  EXPECT_NE(calls[0]["id"], calls[1]["id"]);
}

TEST_F(HttpToolCallsTest, HermesCallsStreamedAddUpToTheWholeReply) {
  Start("hermes");
  const HttpReply whole = Chat(kHermesReply, /*stream=*/false);
  const HttpReply streamed = Chat(kHermesReply, /*stream=*/true);
  ASSERT_TRUE(streamed.ok) << streamed.error;
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  std::string content;
  json calls = json::array();
  std::string finish;
  for (const json& e : Events(streamed.body)) {
    const json& choice = e["choices"][0];
    const json& delta = choice["delta"];
    if (delta.contains("content") && delta["content"].is_string()) {
      content += delta["content"].get<std::string>();
    }
    if (delta.contains("tool_calls")) {
      for (const json& c : delta["tool_calls"]) {
        ASSERT_EQ(c["index"], calls.size()) << "each call whole, in order";
        calls.push_back(c);
      }
    }
    if (choice["finish_reason"].is_string()) finish = choice["finish_reason"];
  }
  const json want = whole.json()["choices"][0];
  EXPECT_EQ(content, want["message"]["content"]);
  ASSERT_EQ(calls.size(), want["message"]["tool_calls"].size());
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i]["function"], want["message"]["tool_calls"][i]["function"]);
    EXPECT_EQ(calls[i]["type"], "function");
  }
  EXPECT_EQ(finish, "tool_calls");
}

TEST_F(HttpToolCallsTest, Llama3AndMistralRepliesOfCalls) {
  Start("llama3_json");
  HttpReply reply = Chat(R"({"name": "add", "parameters": {"a": 1}})", /*stream=*/false);
  ASSERT_EQ(reply.status, 200) << reply.body;
  json message = reply.json()["choices"][0]["message"];
  EXPECT_TRUE(message["content"].is_null()) << reply.body;
  ASSERT_EQ(message["tool_calls"].size(), 1u) << reply.body;
  EXPECT_EQ(message["tool_calls"][0]["function"]["arguments"], R"({"a":1})");
  TearDown();
  gateway_.reset();
  worker_.reset();

  Start("mistral");
  reply = Chat(R"([{"name": "get_weather", "arguments": {"city": "Rome"}, "id": "abcdefghi"}])",
               /*stream=*/true);
  ASSERT_EQ(reply.status, 200) << reply.body;
  int calls = 0;
  for (const json& e : Events(reply.body)) {
    const json& delta = e["choices"][0]["delta"];
    if (delta.contains("tool_calls")) {
      ++calls;
      EXPECT_EQ(delta["tool_calls"][0]["function"]["name"], "get_weather");
    }
  }
  EXPECT_EQ(calls, 1) << reply.body;
}

TEST_F(HttpToolCallsTest, WhatIsNoCallOfAnOfferedFunctionStaysText) {
  Start("hermes");
  const std::string unknown =
      "<tool_call>{\"name\": \"rm_rf\", \"arguments\": {\"path\": \"/\"}}</tool_call>";
  for (const auto& [reply, extra] : {
           std::pair{kHermesReply, json{{"tool_choice", "none"}}},  // the caller said none
           std::pair{unknown, json::object()},                      // a function not offered
       }) {
    const HttpReply r = Chat(reply, /*stream=*/false, extra);
    ASSERT_EQ(r.status, 200) << r.body;
    const json choice = r.json()["choices"][0];
    EXPECT_EQ(choice["message"]["content"], reply);
    EXPECT_FALSE(choice["message"].contains("tool_calls")) << r.body;
    EXPECT_EQ(choice["finish_reason"], "stop");
  }
}

TEST_F(HttpToolCallsTest, AutoOverATemplateWithoutToolSyntaxLeavesText) {
  Start("auto", "auto", "{% for m in messages %}{{ m.content }}{% endfor %}");
  const HttpReply r = Chat(kHermesReply, /*stream=*/false);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json()["choices"][0]["message"]["content"], kHermesReply);
}

TEST_F(HttpToolCallsTest, AutoOverTheChatMlFallbackReadsTheHermesCallsItTeaches) {
  Start("auto");  // the fake model has no template: ChatML, which writes tools as Hermes does
  const HttpReply r = Chat(kHermesReply, /*stream=*/false);
  ASSERT_EQ(r.status, 200) << r.body;
  const json message = r.json()["choices"][0]["message"];
  ASSERT_EQ(message["tool_calls"].size(), 2u) << r.body;
  EXPECT_EQ(message["tool_calls"][0]["function"]["name"], "get_weather");
}

// A reasoning model (--reasoning-format think): its <think> section is reasoning_content, the
// rest content, whole or streamed; with "auto" over ChatML (no <think> in it) all is content.
TEST_F(HttpToolCallsTest, ThinkingBecomesReasoningContent) {
  const std::string reply = "<think>\nCities first.\n</think>\n\n" + kHermesReply;
  Start("hermes", "think");
  const HttpReply whole = Chat(reply, /*stream=*/false);
  ASSERT_EQ(whole.status, 200) << whole.body;
  const json message = whole.json()["choices"][0]["message"];
  EXPECT_EQ(message["reasoning_content"], "Cities first.");
  EXPECT_EQ(message["content"], "Checking.");
  EXPECT_EQ(message["tool_calls"].size(), 2u);
  const HttpReply streamed = Chat(reply, /*stream=*/true);
  std::string reasoning, content;
  for (const json& e : Events(streamed.body)) {
    const json& delta = e["choices"][0]["delta"];
    if (delta.contains("reasoning_content")) reasoning += delta["reasoning_content"];
    if (delta.contains("content") && delta["content"].is_string()) content += delta["content"];
  }
  EXPECT_EQ(reasoning, "Cities first.");
  EXPECT_EQ(content, "Checking.");
  TearDown();
  gateway_.reset();
  worker_.reset();

  Start("none", "auto");
  const HttpReply plain = Chat(reply, /*stream=*/false);
  ASSERT_EQ(plain.status, 200) << plain.body;
  EXPECT_EQ(plain.json()["choices"][0]["message"]["content"], reply);
  EXPECT_FALSE(plain.json()["choices"][0]["message"].contains("reasoning_content"));
}

// gpt-oss's real template (tests/gateway/chat/templates): --reasoning-format auto reads harmony
// off it; the reply's analysis channel is reasoning_content, its final channel content, its
// message to functions.get_weather a tool call, whole and streamed alike; with tool_choice "none"
// no function is offered, so the message stays text; --reasoning-format none leaves the markers
// as text.
std::string GptOssTemplate() {
  std::ifstream in(std::string(SMALLMIND_SOURCE_DIR) +
                   "/tests/gateway/chat/templates/llamacpp-openai-gpt-oss-120b.jinja");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

const std::string kHarmonyAnswer =
    "<|channel|>analysis<|message|>User wants weather.<|end|><|start|>assistant<|channel|>final"
    "<|message|>Sunny in Paris.";
const std::string kHarmonyCall =
    "<|channel|>analysis<|message|>Need the tool.<|end|><|start|>assistant<|channel|>commentary "
    "to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}";

TEST_F(HttpToolCallsTest, HarmonyChannelsOfGptOssAreSplit) {
  const std::string tmpl = GptOssTemplate();
  ASSERT_FALSE(tmpl.empty());
  Start("auto", "auto", tmpl);
  const HttpReply whole = Chat(kHarmonyAnswer, /*stream=*/false);
  ASSERT_EQ(whole.status, 200) << whole.body;
  const json message = whole.json()["choices"][0]["message"];
  EXPECT_EQ(message["reasoning_content"], "User wants weather.");
  EXPECT_EQ(message["content"], "Sunny in Paris.");
  EXPECT_FALSE(message.contains("tool_calls"));
  EXPECT_EQ(whole.json()["choices"][0]["finish_reason"], "stop");

  const HttpReply streamed = Chat(kHarmonyAnswer, /*stream=*/true);
  std::string reasoning, content;
  for (const json& e : Events(streamed.body)) {
    const json& delta = e["choices"][0]["delta"];
    if (delta.contains("reasoning_content")) reasoning += delta["reasoning_content"];
    if (delta.contains("content") && delta["content"].is_string()) content += delta["content"];
  }
  EXPECT_EQ(reasoning, "User wants weather.");
  EXPECT_EQ(content, "Sunny in Paris.");

  const HttpReply call = Chat(kHarmonyCall, /*stream=*/false);
  ASSERT_EQ(call.status, 200) << call.body;
  const json choice = call.json()["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "tool_calls");
  EXPECT_EQ(choice["message"]["reasoning_content"], "Need the tool.");
  ASSERT_EQ(choice["message"]["tool_calls"].size(), 1u) << call.body;
  EXPECT_EQ(choice["message"]["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(choice["message"]["tool_calls"][0]["function"]["arguments"], R"({"city":"Paris"})");

  const HttpReply call_streamed = Chat(kHarmonyCall, /*stream=*/true);
  std::vector<json> calls;
  std::string last_finish;
  for (const json& e : Events(call_streamed.body)) {
    const json& c = e["choices"][0];
    if (c["delta"].contains("tool_calls")) calls.push_back(c["delta"]["tool_calls"][0]);
    if (c["finish_reason"].is_string()) last_finish = c["finish_reason"];
  }
  ASSERT_EQ(calls.size(), 1u) << call_streamed.body;
  EXPECT_EQ(calls[0]["function"]["name"], "get_weather");
  EXPECT_EQ(last_finish, "tool_calls");

  const HttpReply none = Chat(kHarmonyCall, /*stream=*/false, {{"tool_choice", "none"}});
  ASSERT_EQ(none.status, 200) << none.body;
  EXPECT_FALSE(none.json()["choices"][0]["message"].contains("tool_calls")) << none.body;
  EXPECT_EQ(none.json()["choices"][0]["finish_reason"], "stop");
  TearDown();
  gateway_.reset();
  worker_.reset();

  Start("auto", "none", tmpl);
  const HttpReply raw = Chat(kHarmonyAnswer, /*stream=*/false);
  ASSERT_EQ(raw.status, 200) << raw.body;
  EXPECT_EQ(raw.json()["choices"][0]["message"]["content"], kHarmonyAnswer);
  EXPECT_FALSE(raw.json()["choices"][0]["message"].contains("reasoning_content"));
}

TEST_F(HttpToolCallsTest, MalformedToolsAreRefused) {
  Start("hermes");
  json body{{"messages", {{{"role", "user"}, {"content", "say:hi"}}}},
            {"tools", {{{"type", "function"}, {"function", {{"parameters", json::object()}}}}}}};
  const HttpReply r = HttpCall(door_->address(), "POST", "/v1/chat/completions", body.dump());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("tools[0]"), std::string::npos) << r.body;
}

}  // namespace
}  // namespace smallmind::gateway::http
