#include "gateway/http/openai_format.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace smallmind::gateway::http {
namespace {

using smallmind::v1::GenerateResponse;

// A chat chunk of Shape(kChatCompletions) up to its choices.
const std::string kChatChunkHead =
    R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"m","system_fingerprint":null,"choices":)";

// One event of a chat stream of Shape(kChatCompletions) with one choice: its delta (JSON),
// finish_reason (JSON: null or a string) and what follows the choices (e.g. ,"usage":null).
std::string ChatEvent(const std::string& delta, const std::string& finish = "null",
                      const std::string& after_choices = "") {
  return "data: " + kChatChunkHead + R"([{"index":0,"delta":)" + delta +
         R"(,"logprobs":null,"finish_reason":)" + finish + "}]" + after_choices + "}\n\n";
}

ResponseShape Shape(Endpoint e, bool usage = false) {
  ResponseShape s;
  s.endpoint = e;
  s.id = e == Endpoint::kChatCompletions ? "chatcmpl-1" : "cmpl-1";
  s.created = 1700000000;
  s.model = "m";
  s.include_usage = usage;
  return s;
}

GenerateResponse Message(
    const std::string& text, std::vector<uint32_t> ids,
    smallmind::v1::FinishReason finish = smallmind::v1::FINISH_REASON_UNSPECIFIED) {
  GenerateResponse m;
  m.set_text(text);
  for (uint32_t id : ids) m.add_token_ids(id);
  if (finish != smallmind::v1::FINISH_REASON_UNSPECIFIED) {
    m.set_finish_reason(finish);
    m.mutable_usage()->set_prompt_tokens(4);
    m.mutable_usage()->set_completion_tokens(3);
    m.mutable_usage()->set_cached_prompt_tokens(2);
  }
  return m;
}

// Each piece as one worker message of one token, the last finishing with EOS.
std::vector<GenerateResponse> Messages(const std::vector<std::string>& pieces) {
  std::vector<GenerateResponse> messages;
  for (size_t i = 0; i < pieces.size(); i++) {
    messages.push_back(Message(
        pieces[i], {1},
        i + 1 == pieces.size() ? smallmind::v1::EOS : smallmind::v1::FINISH_REASON_UNSPECIFIED));
  }
  return messages;
}

// The whole body of a reply of `pieces` (Messages()), parsed.
nlohmann::json WholeOf(const ResponseShape& shape, const std::vector<std::string>& pieces) {
  OpenAiFormatter whole(shape, nullptr);
  for (const GenerateResponse& m : Messages(pieces)) whole.Add(m);
  return nlohmann::json::parse(whole.Body());
}

// The events a stream of `pieces` (Messages()) sends, from its start to its finish chunk.
std::string StreamOf(const ResponseShape& shape, const std::vector<std::string>& pieces) {
  OpenAiFormatter stream(shape, nullptr);
  std::string sse = stream.StreamStart();
  for (const GenerateResponse& m : Messages(pieces)) sse += stream.StreamMessage(m);
  return sse;
}

TEST(OpenAiFormatterTest, ChatStreamIsRoleDeltaThenContentThenFinishThenUsageThenDone) {
  OpenAiFormatter f(Shape(Endpoint::kChatCompletions, /*usage=*/true), nullptr);
  std::string sse = f.StreamStart();
  sse += f.StreamMessage(Message("Hi", {5}));
  sse += f.StreamMessage(Message(" there", {6, 7}, smallmind::v1::EOS));
  sse += f.StreamEnd();
  const std::string expected =
      ChatEvent(R"({"role":"assistant","content":""})", "null", R"(,"usage":null)") +
      ChatEvent(R"({"content":"Hi"})", "null", R"(,"usage":null)") +
      ChatEvent(R"({"content":" there"})", "null", R"(,"usage":null)") +
      ChatEvent("{}", R"("stop")", R"(,"usage":null)") + "data: " + kChatChunkHead +
      R"([],"usage":{"prompt_tokens":4,"completion_tokens":3,"total_tokens":7,"prompt_tokens_details":{"cached_tokens":2},"completion_tokens_details":{"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}})" +
      "\n\n" + "data: [DONE]\n\n";
  EXPECT_EQ(sse, expected);
}

// A forced call: the whole reply is one tool_calls entry whose arguments are the text (content
// null); a stream opens with the call's header (index, id, type, name, "" arguments) and then
// sends the arguments in pieces, as OpenAI's streams do.
TEST(OpenAiFormatterTest, AForcedCallIsAToolCallsMessageWholeOrStreamed) {
  ResponseShape shape = Shape(Endpoint::kChatCompletions);
  shape.tool_name = "get_weather";
  shape.tool_call_id = "call_1";
  OpenAiFormatter whole(shape, nullptr);
  whole.Add(Message("{\"city\":", {1}));
  whole.Add(Message("\"Oslo\"}", {2}, smallmind::v1::EOS));
  const auto body = nlohmann::json::parse(whole.Body());
  EXPECT_EQ(
      body["choices"][0]["message"].dump(),
      R"({"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{\"city\":\"Oslo\"}","name":"get_weather"},"id":"call_1","type":"function"}]})");
  EXPECT_EQ(body["choices"][0]["finish_reason"], "stop");

  OpenAiFormatter stream(shape, nullptr);
  std::string sse = stream.StreamStart();
  sse += stream.StreamMessage(Message("{\"city\":", {1}));
  sse += stream.StreamMessage(Message("\"Oslo\"}", {2}, smallmind::v1::EOS));
  EXPECT_EQ(
      sse,
      ChatEvent(
          R"({"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]})") +
          ChatEvent(R"({"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]})") +
          ChatEvent(R"({"tool_calls":[{"index":0,"function":{"arguments":"\"Oslo\"}"}}]})") +
          ChatEvent("{}", R"("stop")"));
}

// A call among several tools: the text is {"name": ..., "arguments": {...}}; the reply is that
// function's tool_calls entry with the arguments' text exactly; a stream sends the header when the
// name has been written, then argument pieces, and nothing of the wrapper. Cut short before the
// name, the text is content, whole or streamed.
TEST(OpenAiFormatterTest, ACallAmongSeveralToolsNamesItsFunctionWholeOrStreamed) {
  ResponseShape shape = Shape(Endpoint::kChatCompletions);
  shape.tool_from_output = true;
  shape.tool_call_id = "call_1";
  const std::vector<std::string> pieces = {"{\"name\": \"ne", "g\", \"arguments\": {\"x\"",
                                           ": -2.5}", "}"};
  const nlohmann::json body = WholeOf(shape, pieces);
  EXPECT_EQ(
      body["choices"][0]["message"].dump(),
      R"({"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{\"x\": -2.5}","name":"neg"},"id":"call_1","type":"function"}]})");

  const std::string sse = StreamOf(shape, pieces);
  EXPECT_EQ(
      sse,
      ChatEvent(R"({"role":"assistant","content":null})") +
          ChatEvent(
              R"({"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"neg","arguments":"{\"x\""}}]})") +
          ChatEvent(R"({"tool_calls":[{"index":0,"function":{"arguments":": -2.5}"}}]})") +
          ChatEvent("{}", R"("stop")"));

  OpenAiFormatter cut_whole(shape, nullptr);
  cut_whole.Add(Message("{\"name\": \"ne", {1}, smallmind::v1::LENGTH));
  EXPECT_EQ(nlohmann::json::parse(cut_whole.Body())["choices"][0]["message"].dump(),
            R"({"content":"{\"name\": \"ne","role":"assistant"})");
  OpenAiFormatter cut(shape, nullptr);
  cut.StreamStart();
  EXPECT_EQ(cut.StreamMessage(Message("{\"name\": \"ne", {1}, smallmind::v1::LENGTH)),
            ChatEvent(R"({"content":"{\"name\": \"ne"})") + ChatEvent("{}", R"("length")"));
}

// Calls the model made on its own (tool_choice "auto", Hermes syntax): the text around them is
// content, each call a tool_calls entry with its own id, finish_reason "tool_calls"; streamed,
// the text goes out as it comes and each call whole once its closing tag has arrived.
TEST(OpenAiFormatterTest, CallsTheModelMadeOnItsOwnWholeOrStreamed) {
  ResponseShape shape = Shape(Endpoint::kChatCompletions);
  shape.tool_syntax = ToolCallSyntax::kHermes;
  shape.tool_functions = {"add", "neg"};
  shape.tool_call_id = "call_1";
  const std::vector<std::string> pieces = {
      "Two calls.", "\n<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1}}",
      "\n</tool_call>\n<tool_call>{\"name\": \"neg\", \"arguments\": {\"x\": 2}}</tool_", "call>"};
  const nlohmann::json body = WholeOf(shape, pieces);
  EXPECT_EQ(
      body["choices"][0]["message"].dump(),
      R"({"content":"Two calls.","role":"assistant","tool_calls":[{"function":{"arguments":"{\"a\":1}","name":"add"},"id":"call_1","type":"function"},{"function":{"arguments":"{\"x\":2}","name":"neg"},"id":"call_1_1","type":"function"}]})");
  EXPECT_EQ(body["choices"][0]["finish_reason"], "tool_calls");

  const std::string sse = StreamOf(shape, pieces);
  EXPECT_EQ(
      sse,
      ChatEvent(R"({"role":"assistant","content":""})") + ChatEvent(R"({"content":"Two calls."})") +
          ChatEvent(
              R"({"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"add","arguments":"{\"a\":1}"}}]})") +
          ChatEvent(
              R"({"tool_calls":[{"index":1,"id":"call_1_1","type":"function","function":{"name":"neg","arguments":"{\"x\":2}"}}]})") +
          ChatEvent("{}", R"("tool_calls")"));

  // No call of an offered function: all of it is content, finish_reason the worker's.
  OpenAiFormatter text(shape, nullptr);
  text.Add(Message("<tool_call>{\"name\": \"rm\", \"arguments\": {}}</tool_call>", {1},
                   smallmind::v1::EOS));
  const auto text_body = nlohmann::json::parse(text.Body());
  EXPECT_EQ(text_body["choices"][0]["message"]["content"],
            "<tool_call>{\"name\": \"rm\", \"arguments\": {}}</tool_call>");
  EXPECT_FALSE(text_body["choices"][0]["message"].contains("tool_calls"));
  EXPECT_EQ(text_body["choices"][0]["finish_reason"], "stop");
}

// A reasoning model's reply: the <think> section becomes reasoning_content (streamed as deltas
// of that field first), the rest content; calls after the thinking are still calls.
TEST(OpenAiFormatterTest, ThinkingBecomesReasoningContentWholeOrStreamed) {
  ResponseShape shape = Shape(Endpoint::kChatCompletions);
  shape.reasoning = true;
  const std::vector<std::string> pieces = {"<think>\nTwo", " and two.\n</th", "ink>\n\nFour."};
  EXPECT_EQ(WholeOf(shape, pieces)["choices"][0]["message"].dump(),
            R"({"content":"Four.","reasoning_content":"Two and two.","role":"assistant"})");
  const std::string sse = StreamOf(shape, pieces);
  EXPECT_EQ(sse, ChatEvent(R"({"role":"assistant","content":""})") +
                     ChatEvent(R"({"reasoning_content":"Two"})") +
                     ChatEvent(R"({"reasoning_content":" and two."})") +
                     ChatEvent(R"({"content":"Four."})") + ChatEvent("{}", R"("stop")"));

  // No thinking: reasoning_content null. Thinking, then a Hermes call.
  OpenAiFormatter plain(shape, nullptr);
  plain.Add(Message("Four.", {1}, smallmind::v1::EOS));
  EXPECT_EQ(nlohmann::json::parse(plain.Body())["choices"][0]["message"].dump(),
            R"({"content":"Four.","reasoning_content":null,"role":"assistant"})");
  shape.tool_syntax = ToolCallSyntax::kHermes;
  shape.tool_functions = {"add"};
  shape.tool_call_id = "call_1";
  OpenAiFormatter call(shape, nullptr);
  call.Add(Message(
      "<think>I should add.</think>\n<tool_call>{\"name\": \"add\", \"arguments\": {}}</tool_call>",
      {1}, smallmind::v1::EOS));
  const auto body = nlohmann::json::parse(call.Body())["choices"][0];
  EXPECT_EQ(body["message"]["reasoning_content"], "I should add.");
  EXPECT_TRUE(body["message"]["content"].is_null());
  EXPECT_EQ(body["message"]["tool_calls"][0]["function"]["name"], "add");
  EXPECT_EQ(body["finish_reason"], "tool_calls");
}

TEST(OpenAiFormatterTest, CompletionStreamWithoutUsageHasNoUsageKey) {
  OpenAiFormatter f(Shape(Endpoint::kCompletions), nullptr);
  EXPECT_EQ(f.StreamStart(), "");
  const std::string chunk = f.StreamMessage(Message("Once", {1}, smallmind::v1::LENGTH));
  EXPECT_EQ(
      chunk,
      R"(data: {"id":"cmpl-1","object":"text_completion","created":1700000000,"model":"m","choices":[{"index":0,"text":"Once","logprobs":null,"finish_reason":null}]})"
      "\n\n"
      R"(data: {"id":"cmpl-1","object":"text_completion","created":1700000000,"model":"m","choices":[{"index":0,"text":"","logprobs":null,"finish_reason":"length"}]})"
      "\n\n");
  EXPECT_EQ(f.StreamEnd(), "data: [DONE]\n\n");
}

TEST(OpenAiFormatterTest, WholeBodiesCarryTextFinishReasonAndUsage) {
  OpenAiFormatter chat(Shape(Endpoint::kChatCompletions), nullptr);
  chat.Add(Message("Hel", {1}));
  chat.Add(Message("lo", {2}, smallmind::v1::STOP));
  const auto body = nlohmann::json::parse(chat.Body());
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_EQ(body["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(body["choices"][0]["message"]["content"], "Hello");
  EXPECT_EQ(body["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(body["usage"]["total_tokens"], 7);

  ResponseShape echo = Shape(Endpoint::kCompletions);
  echo.echo_text = "Once";
  OpenAiFormatter completion(echo, nullptr);
  completion.Add(Message(" upon", {1}, smallmind::v1::LENGTH));
  const auto c = nlohmann::json::parse(completion.Body());
  EXPECT_EQ(c["object"], "text_completion");
  EXPECT_EQ(c["choices"][0]["text"], "Once upon");
  EXPECT_EQ(c["choices"][0]["finish_reason"], "length");
  EXPECT_TRUE(c["choices"][0]["logprobs"].is_null());
}

TEST(OpenAiFormatterTest, LogprobsUseTokenTextsInEitherShape) {
  const TokenPieces pieces = {"<unk>", "A", " b", "\xE4"};
  GenerateResponse m = Message("A b", {1, 2}, smallmind::v1::LENGTH);
  for (uint32_t id : {1u, 2u}) {
    auto* lp = m.add_logprobs();
    lp->set_token_id(id);
    lp->set_logprob(-0.5f);
    auto* top = lp->add_top();
    top->set_token_id(3);
    top->set_logprob(-1.0f);
  }
  ResponseShape s = Shape(Endpoint::kCompletions);
  s.logprobs = true;
  s.top_logprobs = 1;
  OpenAiFormatter completion(s, &pieces);
  completion.Add(m);
  const auto c = nlohmann::json::parse(completion.Body())["choices"][0]["logprobs"];
  EXPECT_EQ(c["tokens"], nlohmann::json({"A", " b"}));
  EXPECT_EQ(c["text_offset"], nlohmann::json({0, 1}));
  EXPECT_EQ(c["top_logprobs"][0].size(), 1u);  // the partial UTF-8 byte prints replaced

  s.endpoint = Endpoint::kChatCompletions;
  OpenAiFormatter chat(s, &pieces);
  chat.Add(m);
  const auto content = nlohmann::json::parse(chat.Body())["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(content.size(), 2u);
  EXPECT_EQ(content[1]["token"], " b");
  EXPECT_EQ(content[1]["bytes"], nlohmann::json({32, 98}));
  EXPECT_EQ(content[1]["top_logprobs"][0]["bytes"], nlohmann::json({0xE4}));
}

TEST(OpenAiFormatterTest, StreamErrorIsOneEventWithTheErrorObject) {
  const std::string e = OpenAiFormatter::StreamError(MakeError(503, "worker died"));
  EXPECT_EQ(e.rfind("data: {\"error\":{\"message\":\"worker died\"", 0), 0u) << e;
  EXPECT_EQ(e.substr(e.size() - 2), "\n\n");
}

// The receipt on the last message becomes OpenAI's system_fingerprint (what a client compares,
// with its seed, to know whether the backend that answered could reproduce an earlier answer).
TEST(OpenAiFormatterTest, ReceiptBecomesTheSystemFingerprintOfTheLastChunkAndTheWholeBody) {
  GenerateResponse last = Message("!", {9}, smallmind::v1::LENGTH);
  last.mutable_receipt()->set_model_fingerprint("0123456789abcdef");
  last.mutable_receipt()->set_kernel_isa("avx2");

  OpenAiFormatter stream(Shape(Endpoint::kChatCompletions), nullptr);
  const std::string first = stream.StreamMessage(Message("Hi", {5}));
  EXPECT_NE(first.find(R"("system_fingerprint":null)"), std::string::npos) << first;
  const std::string end = stream.StreamMessage(last);
  EXPECT_NE(end.find(R"("system_fingerprint":"fp_0123456789abcdef_avx2")"), std::string::npos)
      << end;

  OpenAiFormatter whole(Shape(Endpoint::kCompletions), nullptr);
  whole.Add(Message("Hi", {5}));
  whole.Add(last);
  EXPECT_EQ(nlohmann::json::parse(whole.Body())["system_fingerprint"], "fp_0123456789abcdef_avx2");
  // The KV cache type decides the bits too: a receipt that names it (every worker's does) ends the
  // fingerprint with it.
  last.mutable_receipt()->set_kv_dtype("q8");
  OpenAiFormatter with_kv(Shape(Endpoint::kCompletions), nullptr);
  with_kv.Add(last);
  EXPECT_EQ(nlohmann::json::parse(with_kv.Body())["system_fingerprint"],
            "fp_0123456789abcdef_avx2_q8");
  OpenAiFormatter no_receipt(Shape(Endpoint::kCompletions), nullptr);
  no_receipt.Add(Message("Hi", {5}, smallmind::v1::LENGTH));
  EXPECT_FALSE(nlohmann::json::parse(no_receipt.Body()).contains("system_fingerprint"));
}

}  // namespace
}  // namespace smallmind::gateway::http

namespace smallmind::gateway::http {
namespace {

// Choice `index` of a request whose reply is `text`, finished with `completion` tokens.
OpenAiFormatter ChoiceOf(uint32_t index, const std::string& text, uint32_t completion,
                         uint32_t cached, bool usage = true) {
  ResponseShape shape = Shape(Endpoint::kChatCompletions, usage);
  shape.index = index;
  OpenAiFormatter f(shape, nullptr);
  GenerateResponse m = Message(text, {1}, smallmind::v1::EOS);
  m.mutable_usage()->set_completion_tokens(completion);
  m.mutable_usage()->set_cached_prompt_tokens(cached);
  f.Add(m);
  return f;
}

TEST(OpenAiFormatterTest, SeveralChoicesAreOneBodyWithThePromptCountedOnce) {
  const OpenAiFormatter a = ChoiceOf(0, "A", 3, 0), b = ChoiceOf(1, "B", 5, 4);
  const OpenAiFormatter* both[] = {&a, &b};
  const auto body = nlohmann::json::parse(OpenAiFormatter::BodyOf(both));
  ASSERT_EQ(body["choices"].size(), 2u);
  EXPECT_EQ(body["choices"][0]["index"], 0);
  EXPECT_EQ(body["choices"][0]["message"]["content"], "A");
  EXPECT_EQ(body["choices"][1]["index"], 1);
  EXPECT_EQ(body["choices"][1]["message"]["content"], "B");
  EXPECT_EQ(
      body["usage"].dump(),
      R"({"completion_tokens":8,"completion_tokens_details":{"accepted_prediction_tokens":0,"rejected_prediction_tokens":0},"prompt_tokens":4,"prompt_tokens_details":{"cached_tokens":4},"total_tokens":12})");
  const auto end = OpenAiFormatter::StreamEndOf(both);
  EXPECT_NE(end.find(R"("usage":{"prompt_tokens":4,"completion_tokens":8,"total_tokens":12)"),
            std::string::npos)
      << end;
}

TEST(OpenAiFormatterTest, StreamedChoicesCarryTheirIndex) {
  ResponseShape shape = Shape(Endpoint::kChatCompletions);
  shape.index = 3;
  OpenAiFormatter f(shape, nullptr);
  const std::string sse = f.StreamStart() + f.StreamMessage(Message("x", {1}));
  EXPECT_EQ(sse.find(R"("index":0)"), std::string::npos) << sse;
  EXPECT_NE(sse.find(R"("choices":[{"index":3,"delta":{"role":"assistant")"), std::string::npos)
      << sse;
}

TEST(OpenAiFormatterTest, AStreamCutShortEndsEachUnfinishedChoiceWithAbort) {
  OpenAiFormatter f(Shape(Endpoint::kChatCompletions), nullptr);
  f.StreamStart();
  f.StreamMessage(Message("Hi", {5}));
  EXPECT_EQ(f.StreamAbort(), ChatEvent("{}", R"("abort")"));
  EXPECT_EQ(f.StreamAbort(), "");  // once
  OpenAiFormatter done(Shape(Endpoint::kCompletions), nullptr);
  done.StreamMessage(Message("Hi", {5}, smallmind::v1::EOS));
  EXPECT_EQ(done.StreamAbort(), "");  // it finished on its own
}

}  // namespace
}  // namespace smallmind::gateway::http
