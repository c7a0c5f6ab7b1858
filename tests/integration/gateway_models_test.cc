// Many models behind one gateway (issue 45; docs/models.md): a real gateway serving two names of
// the shipped stories260K (`a` and `b`, 1 worker each with an 8 MiB KV pool) under a memory budget
// that holds only one of them. Routing by name on both doors, NOT_FOUND / 404 for other names,
// /v1/models and ListModels states as models load on first use, LRU unloads while requests
// alternate between the two without one failing, and a request's keep_alive 0 unloading its model.
#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "tests/http/http_client.h"
#include "tests/testing/http_get.h"
#include "tests/testing/prometheus_text.h"
#include "tests/testing/rpc/gateway_fixture.h"

namespace smallmind {
namespace {

using testing::HttpCall;

class GatewayModelsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    testing::GatewayOptions options;
    options.http = true;
    options.metrics = true;
    options.model = "a=builtin:stories260K,kv-memory-mb=8";
    // 12 MiB: one model's 8 MiB KV pool fits, two do not.
    options.extra_args = {"--model", "b=builtin:stories260K,kv-memory-mb=8", "--memory-budget",
                          "12"};
    auto started = testing::GatewayFixture::Start(options);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    gateway_ = std::move(started).value().release();
  }
  static void TearDownTestSuite() {
    delete gateway_;
    gateway_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(gateway_, nullptr); }

  static testing::GenerateOutcome Grpc(const std::string& model) {
    v1::GenerateRequest r;
    r.set_prompt("Once upon a time");
    r.mutable_sampling()->set_temperature(0);
    r.mutable_stopping()->set_max_new_tokens(4);
    if (!model.empty()) r.set_model(model);
    return testing::RunGenerate(gateway_->stub(), r);
  }
  static testing::HttpReply Http(const std::string& model, const std::string& extra = "") {
    return HttpCall(gateway_->http_address(), "POST", "/v1/completions",
                    R"({"model":")" + model +
                        R"(","prompt":"Once upon a time","max_tokens":4,"temperature":0)" + extra +
                        "}");
  }
  // /v1/models' state of `id`; "" when it is not listed.
  static std::string State(const std::string& id) {
    const testing::HttpReply models = HttpCall(gateway_->http_address(), "GET", "/v1/models");
    const nlohmann::json body = models.json();  // kept: the loop walks into it
    for (const auto& m : body["data"]) {
      if (m["id"] == id) return m["state"].get<std::string>();
    }
    return "";
  }
  // Polls State(id) until it is `want` (bounded: 400 polls 25 ms apart).
  static bool EventuallyState(const std::string& id, const std::string& want) {
    for (int i = 0; i < 400; ++i) {
      if (State(id) == want) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return false;
  }

  static testing::GatewayFixture* gateway_;
};
testing::GatewayFixture* GatewayModelsTest::gateway_ = nullptr;

TEST_F(GatewayModelsTest, RoutesByNameAndSwapsModelsUnderTheBudgetWithoutAFailedRequest) {
  // The first model loads at start; the second on its first request.
  EXPECT_EQ(State("a"), "loaded");
  EXPECT_EQ(State("b"), "unloaded");
  const testing::GenerateOutcome b = Grpc("b");
  ASSERT_TRUE(b.status.ok()) << b.status.error_message();
  EXPECT_EQ(b.token_ids().size(), 4u);
  EXPECT_EQ(State("b"), "loaded");
  EXPECT_EQ(State("a"), "unloaded") << "the budget holds one: the idle `a` went first";
  const testing::HttpReply a = Http("a");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.json()["model"], "a");
  EXPECT_EQ(State("a"), "loaded");
  EXPECT_EQ(State("b"), "unloaded");
  // Alternating, each request swaps the models; none fails. The same greedy prompt gives the
  // same tokens on either name (one model file).
  for (int i = 0; i < 6; ++i) {
    SCOPED_TRACE(i);
    const std::string model = i % 2 == 0 ? "b" : "a";
    if (i % 4 < 2) {
      const testing::GenerateOutcome g = Grpc(model);
      ASSERT_TRUE(g.status.ok()) << g.status.error_message();
      EXPECT_EQ(g.token_ids(), b.token_ids());
    } else {
      const testing::HttpReply h = Http(model);
      ASSERT_EQ(h.status, 200) << h.body;
      EXPECT_EQ(h.json()["model"], model);
    }
    EXPECT_EQ(State(model), "loaded");
  }
}

TEST_F(GatewayModelsTest, AnUnknownNameIsNotFoundListingTheServedNames) {
  const testing::GenerateOutcome g = Grpc("gpt-4");
  EXPECT_EQ(g.status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(g.status.error_message(),
            "the model `gpt-4` is not served here; this server serves `a`, `b`");
  const testing::HttpReply h = Http("gpt-4");
  ASSERT_EQ(h.status, 404) << h.body;
  EXPECT_EQ(h.json()["error"]["code"], "model_not_found");
  EXPECT_NE(h.body.find("this server serves `a`, `b`"), std::string::npos) << h.body;
  EXPECT_EQ(HttpCall(gateway_->http_address(), "GET", "/v1/models/gpt-4").status, 404);
}

TEST_F(GatewayModelsTest, ListModelsGivesEveryModelWithItsStateAndFacts) {
  ASSERT_TRUE(Grpc("a").status.ok());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::ListModelsResponse listed;
  ASSERT_TRUE(gateway_->stub().ListModels(&context, v1::ListModelsRequest(), &listed).ok());
  ASSERT_EQ(listed.models_size(), 2);
  EXPECT_EQ(listed.models(0).names(0), "a");
  EXPECT_EQ(listed.models(0).state(), "loaded");
  EXPECT_EQ(listed.models(0).info().model(), "builtin:stories260K");
  EXPECT_GT(listed.models(0).info().context_length(), 0u);
  EXPECT_EQ(listed.models(0).estimated_bytes(), uint64_t{8} << 20);
  EXPECT_EQ(listed.models(1).names(0), "b");
  EXPECT_EQ(listed.models(1).state(), "unloaded");
  EXPECT_EQ(listed.models(1).keep_alive_ms(), -1);  // --keep-alive's default: forever
}

TEST_F(GatewayModelsTest, GetModelInfoRoutesByNameAndKnowsAnUnloadedModelsFacts) {
  // b loaded once, then unloaded for a (the budget holds one): its facts are those of that load.
  ASSERT_TRUE(Grpc("b").status.ok());
  ASSERT_TRUE(Grpc("a").status.ok());
  auto info = [](const std::string& model, v1::ModelInfo* out) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::GetModelInfoRequest request;
    request.set_model(model);
    return gateway_->stub().GetModelInfo(&context, request, out);
  };
  v1::ModelInfo a, b, unknown;
  ASSERT_TRUE(info("a", &a).ok());
  EXPECT_EQ(a.workers(), 1u);
  EXPECT_EQ(a.served_model_names(0), "a");
  ASSERT_TRUE(info("b", &b).ok());
  EXPECT_EQ(b.workers(), 0u) << "not loaded";
  EXPECT_EQ(b.served_model_names(0), "b");
  EXPECT_EQ(b.context_length(), a.context_length());
  EXPECT_EQ(info("gpt-4", &unknown).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(EventuallyState("b", "loaded")) << "asking for it started its load";
}

TEST_F(GatewayModelsTest, ARequestsKeepAliveZeroUnloadsItsModelOnceIdle) {
  const testing::HttpReply h = Http("b", R"(,"keep_alive":0)");
  ASSERT_EQ(h.status, 200) << h.body;
  EXPECT_TRUE(EventuallyState("b", "unloaded"));
  // Loaded again on the next request, which waits for it rather than failing.
  const testing::HttpReply again = Http("b", R"(,"keep_alive":"-1")");
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(State("b"), "loaded");
  EXPECT_EQ(HttpCall(gateway_->http_address(), "POST", "/v1/completions",
                     R"({"model":"b","prompt":"x","max_tokens":1,"keep_alive":"soon"})")
                .status,
            400);
}

TEST_F(GatewayModelsTest, MetricsCarryTheModelLabel) {
  ASSERT_TRUE(Grpc("b").status.ok());
  auto scrape = testing::HttpGet("127.0.0.1", gateway_->metrics_port(), "/metrics");
  ASSERT_TRUE(scrape.ok()) << scrape.status().ToString();
  auto text = testing::ParseMetricsText(scrape->body);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  const std::optional<double> ok_b =
      text->Value("smallmind_requests_total", {{"model", "b"}, {"status", "OK"}});
  ASSERT_TRUE(ok_b.has_value());
  EXPECT_GE(*ok_b, 1.0);
  EXPECT_TRUE(text->Value("smallmind_requests_total", {{"model", "a"}, {"status", "OK"}}));
  EXPECT_EQ(text->Value("smallmind_worker_up", {{"model", "b"}, {"worker", "0"}}), 1.0);
}

}  // namespace
}  // namespace smallmind
