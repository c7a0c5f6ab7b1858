// Per-model chat settings and waiting for a load (issue 45; docs/models.md): a real gateway serving
// three names of the shipped stories260K, `a` with Qwen2.5's chat template, `b` with Llama 3.2's
// (both as `chat-template=FILE` options of their --model) and `c` with none (the model has none:
// ChatML). `b` and `c` are not loaded at start. Each chat door renders with the template of the
// model the request names, loading that model first; Tokenize and GetModelInfo wait for a load too.
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/http/http_client.h"
#include "tests/testing/child_process.h"
#include "tests/testing/rpc/gateway_fixture.h"
#include "tests/testing/scoped_temp_dir.h"
#include "tests/testing/shared_data.h"

namespace smallmind {
namespace {

using testing::HttpCall;
using testing::HttpReply;

constexpr const char* kQwen = "chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja";
constexpr const char* kLlama = "chat-templates/meta-llama-Llama-3.2-3B-Instruct.jinja";
constexpr const char* kMessages = R"("messages":[{"role":"user","content":"Tell me a story"}])";

class GatewayModelChatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SM_REQUIRE_SHARED_DATA(kQwen);
    SM_REQUIRE_SHARED_DATA(kLlama);
    testing::GatewayOptions options;
    options.http = true;
    options.model =
        "a=builtin:stories260K,kv-memory-mb=8,chat-template=" + testing::SharedDataPath(kQwen);
    options.extra_args = {
        "--model",
        "b=builtin:stories260K,kv-memory-mb=8,chat-template=" + testing::SharedDataPath(kLlama),
        "--model",
        "c=builtin:stories260K,kv-memory-mb=8",
        "--chat-template-date",
        "2026-01-15"};
    auto started = testing::GatewayFixture::Start(options);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    gateway_ = std::move(started).value();
  }

  HttpReply Post(const std::string& path, const std::string& body) {
    return HttpCall(gateway_->http_address(), "POST", path, body);
  }
  // /apply-template's prompt for `model`.
  std::string Rendered(const std::string& model) {
    const HttpReply r =
        Post("/apply-template", R"({"model":")" + model + R"(",)" + kMessages + "}");
    EXPECT_EQ(r.status, 200) << r.body;
    return r.status == 200 ? r.json()["prompt"].get<std::string>() : "";
  }
  // /v1/chat/completions' usage.prompt_tokens for `model` (one greedy token).
  int64_t ChatPromptTokens(const std::string& model) {
    const HttpReply r = Post("/v1/chat/completions", R"({"model":")" + model + R"(",)" + kMessages +
                                                         R"(,"max_tokens":1,"temperature":0})");
    EXPECT_EQ(r.status, 200) << r.body;
    return r.status == 200 ? r.json()["usage"]["prompt_tokens"].get<int64_t>() : -1;
  }
  // /v1/messages/count_tokens' input_tokens for `model`.
  int64_t CountTokens(const std::string& model) {
    const HttpReply r =
        Post("/v1/messages/count_tokens", R"({"model":")" + model + R"(",)" + kMessages + "}");
    EXPECT_EQ(r.status, 200) << r.body;
    return r.status == 200 ? r.json()["input_tokens"].get<int64_t>() : -1;
  }
  // /v1/models' state of `id`.
  std::string State(const std::string& id) {
    const HttpReply models = HttpCall(gateway_->http_address(), "GET", "/v1/models");
    const nlohmann::json body = models.json();
    for (const auto& m : body["data"]) {
      if (m["id"] == id) return m["state"].get<std::string>();
    }
    return "";
  }

  std::unique_ptr<testing::GatewayFixture> gateway_;
};

TEST_F(GatewayModelChatTest, EachModelsChatTemplateRendersItsRequests) {
  ASSERT_EQ(State("b"), "unloaded");
  const std::string a = Rendered("a");
  const std::string b = Rendered("b");  // waits for b's load
  const std::string c = Rendered("c");
  EXPECT_NE(a.find("<|im_start|>system\nYou are Qwen, created by Alibaba Cloud."),
            std::string::npos)
      << a;
  EXPECT_NE(a.find("<|im_start|>user\nTell me a story<|im_end|>\n<|im_start|>assistant\n"),
            std::string::npos)
      << a;
  EXPECT_NE(b.find("Today Date: 15 Jan 2026"), std::string::npos) << b;
  EXPECT_NE(b.find("<|start_header_id|>user<|end_header_id|>\n\nTell me a story<|eot_id|>"),
            std::string::npos)
      << b;
  EXPECT_EQ(b.find("<|im_start|>"), std::string::npos) << b;
  // c has no template of its own and there is no --chat-template: ChatML, no Qwen system prompt.
  EXPECT_EQ(c, "<|im_start|>user\nTell me a story<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(Rendered(""), a) << "no model: the default (first) one";
}

TEST_F(GatewayModelChatTest, ChatDoorsCountThePromptOfTheModelsOwnTemplate) {
  // b is not loaded: its chat request loads it first (waiting, not failing) and renders with
  // Llama 3.2's template, a longer prompt than Qwen's or ChatML's for the same message.
  const int64_t b = ChatPromptTokens("b");
  EXPECT_EQ(State("b"), "loaded");
  const int64_t a = ChatPromptTokens("a");
  const int64_t c = ChatPromptTokens("c");
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  ASSERT_GT(c, 0);
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(b, c);
  // Anthropic's doors agree with OpenAI's, model by model.
  EXPECT_EQ(CountTokens("a"), a);
  EXPECT_EQ(CountTokens("b"), b);
  EXPECT_EQ(CountTokens("c"), c);
  const HttpReply m = Post("/v1/messages", R"({"model":"c","max_tokens":1,)" +
                                               std::string(kMessages) + R"(,"temperature":0})");
  ASSERT_EQ(m.status, 200) << m.body;
  EXPECT_EQ(m.json()["model"], "c");
  // Anthropic counts the prefix cache's reads (the chat request above) apart.
  const nlohmann::json usage = m.json()["usage"];
  EXPECT_EQ(usage["input_tokens"].get<int64_t>() + usage["cache_read_input_tokens"].get<int64_t>(),
            c);
}

TEST_F(GatewayModelChatTest, CountTokensOfAnUnloadedModelWaitsForItsLoad) {
  ASSERT_EQ(State("c"), "unloaded");
  const int64_t c = CountTokens("c");
  EXPECT_GT(c, 0);
  EXPECT_EQ(State("c"), "loaded");
  EXPECT_EQ(Post("/v1/messages/count_tokens", R"({"model":"gpt-4",)" + std::string(kMessages) + "}")
                .status,
            404);
}

TEST_F(GatewayModelChatTest, LlamaCppsTokenizeTakesAModelAndWaitsForItsLoad) {
  ASSERT_EQ(State("b"), "unloaded");
  const HttpReply tokens = Post("/tokenize", R"({"model":"b","content":"Once upon a time"})");
  ASSERT_EQ(tokens.status, 200) << tokens.body;
  EXPECT_GT(tokens.json()["tokens"].size(), 1u);
  EXPECT_EQ(State("b"), "loaded");
  const HttpReply text =
      Post("/detokenize", R"({"model":"b","tokens":)" + tokens.json()["tokens"].dump() + "}");
  ASSERT_EQ(text.status, 200) << text.body;
  EXPECT_NE(text.json()["content"].get<std::string>().find("Once upon a time"), std::string::npos)
      << text.body;
  EXPECT_EQ(Post("/detokenize", R"({"model":"b","tokens":[512]})").status, 400)
      << "an id past b's vocabulary";
  EXPECT_EQ(Post("/tokenize", R"({"model":"gpt-4","content":"x"})").status, 404);
  EXPECT_EQ(Post("/tokenize", R"({"model":7,"content":"x"})").status, 400);
}

TEST_F(GatewayModelChatTest, TokenizeAndGetModelInfoOfAnUnloadedModelWaitForItsLoad) {
  ASSERT_EQ(State("b"), "unloaded");
  ASSERT_EQ(State("c"), "unloaded");
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  v1::TokenizeRequest request;
  request.set_model("b");
  request.set_text("Once upon a time");
  v1::TokenizeResponse tokens;
  const grpc::Status tokenized = gateway_->stub().Tokenize(&context, request, &tokens);
  ASSERT_TRUE(tokenized.ok()) << tokenized.error_message();
  EXPECT_GT(tokens.token_ids_size(), 1);
  EXPECT_EQ(State("b"), "loaded");

  // c was never loaded, so no facts are known: the call waits for its first load.
  grpc::ClientContext info_context;
  info_context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  v1::GetModelInfoRequest info_request;
  info_request.set_model("c");
  v1::ModelInfo info;
  const grpc::Status answered = gateway_->stub().GetModelInfo(&info_context, info_request, &info);
  ASSERT_TRUE(answered.ok()) << answered.error_message();
  EXPECT_EQ(info.workers(), 1u);
  EXPECT_EQ(info.served_model_names(0), "c");
  EXPECT_GT(info.context_length(), 0u);
}

// A model's chat-template file is read at start: one that cannot be read stops the gateway (its
// stderr names the model and the file) rather than failing that model's chat requests later; the
// same flags with the file there start it.
TEST(GatewayModelChatStartTest, AnUnreadableChatTemplateFileStopsTheStart) {
  testing::ScopedTempDir runtime("gateway");
  const std::string file = runtime.File("t.jinja");
  auto spawn = [&] {
    return testing::ChildProcess::Spawn(
        {testing::BinaryPath("smallmind-gateway"), "--port", "0", "--listen-host", "127.0.0.1",
         "--workers", "1", "--runtime-dir", runtime.path(), "--http-port", "0", "--model",
         "a=builtin:stories260K,kv-memory-mb=8", "--model",
         "b=builtin:stories260K,kv-memory-mb=8,chat-template=" + file});
  };
  auto missing = spawn();
  ASSERT_TRUE(missing.ok()) << missing.status().ToString();
  EXPECT_FALSE((*missing)->WaitForLine("listening on", std::chrono::milliseconds(60000)).ok());
  const int status = (*missing)->Wait(std::chrono::milliseconds(30000));
  ASSERT_NE(status, -1) << "the gateway did not exit";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << status;

  std::ofstream(file) << "{{ messages[0].content }}";
  auto present = spawn();
  ASSERT_TRUE(present.ok()) << present.status().ToString();
  EXPECT_TRUE((*present)->WaitForLine("listening on", std::chrono::milliseconds(60000)).ok());
  const int stopped = (*present)->Terminate(std::chrono::milliseconds(30000));
  EXPECT_TRUE(WIFEXITED(stopped) && WEXITSTATUS(stopped) == 0) << stopped;
}

}  // namespace
}  // namespace smallmind
