// RunLoadBench over a scripted in-process StreamOpener: how outcomes, tokens and latency samples
// are counted. (The real streams and the client's cancel are in tests/integration/cli_bench_test.)
#include "cli/load_bench.h"

#include <atomic>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace smallmind::cli {
namespace {

// Answers each request with max_new_tokens tokens in messages of `group` tokens (the last one
// carries the usage), then its status: prompt "fail" -> UNAVAILABLE after 1 message; a request the
// plan cancels after k tokens ends after the message reaching k with CANCELLED (what the server
// answers to the client's cancel).
class ScriptedStream final : public ResponseStream {
 public:
  ScriptedStream(const smallmind::v1::GenerateRequest& request, uint32_t group)
      : total_(request.stopping().max_new_tokens()),
        group_(group),
        fail_(request.prompt() == "fail"),
        prompt_tokens_(static_cast<uint32_t>(request.prompt_token_ids().ids_size())) {}

  bool Read(smallmind::v1::GenerateResponse* message) override {
    if (sent_ >= total_ || (fail_ && sent_ > 0) || (cancel_at_ > 0 && sent_ >= cancel_at_)) {
      return false;
    }
    message->Clear();
    const uint32_t n = std::min(group_, total_ - sent_);
    for (uint32_t i = 0; i < n; ++i) message->add_token_ids(7);
    sent_ += n;
    if (sent_ == total_) {
      // All but the last prompt token came from the prefix cache.
      message->mutable_usage()->set_prompt_tokens(prompt_tokens_);
      message->mutable_usage()->set_cached_prompt_tokens(prompt_tokens_ - 1);
    }
    return true;
  }
  grpc::Status Finish() override {
    if (fail_) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "worker died");
    if (cancel_at_ > 0 && sent_ < total_) return grpc::Status(grpc::StatusCode::CANCELLED, "");
    return grpc::Status::OK;
  }
  void CancelAt(uint32_t tokens) { cancel_at_ = tokens; }

 private:
  const uint32_t total_, group_;
  const bool fail_;
  const uint32_t prompt_tokens_;
  uint32_t sent_ = 0;
  uint32_t cancel_at_ = 0;
};

class ScriptedOpener final : public StreamOpener {
 public:
  ScriptedOpener(const LoadPlan& plan, uint32_t group) : plan_(plan), group_(group) {}
  std::unique_ptr<ResponseStream> Open(grpc::ClientContext*,
                                       const smallmind::v1::GenerateRequest& request) override {
    auto stream = std::make_unique<ScriptedStream>(request, group_);
    // The plan tells which requests the bench will cancel: the server side of that cancel.
    const uint64_t index = request.sampling().seed() - 1000;
    const uint32_t at = plan_.Request(index).cancel_after_tokens;
    // The bench cancels once the tokens received reach `at`, at a message boundary.
    if (at > 0) stream->CancelAt(((at + group_ - 1) / group_) * group_);
    ++opened;
    return stream;
  }
  std::atomic<int> opened{0};

 private:
  const LoadPlan& plan_;
  const uint32_t group_;
};

LoadPlanOptions Options() {
  LoadPlanOptions o;
  o.prompt_tokens = {5, 5};
  o.vocab_size = 100;
  o.max_tokens = {12, 12};
  o.base.mutable_sampling()->set_seed(1000);  // the scripted opener finds the index from it
  return o;
}

TEST(LoadBenchTest, CountsEveryRequestOnceWithItsTokensAndLatencySamples) {
  auto plan = LoadPlan::Make(Options());
  ASSERT_TRUE(plan.ok());
  ScriptedOpener opener(*plan, /*group=*/3);
  LoadBenchOptions options;
  options.concurrency = 4;
  options.requests = 40;
  const LoadBenchReport r = RunLoadBench(opener, *plan, options);
  EXPECT_EQ(opener.opened.load(), 40);
  EXPECT_EQ(r.started, 40u);
  EXPECT_EQ(r.ok, 40u);
  EXPECT_EQ(r.cancelled + r.errors, 0u);
  EXPECT_EQ(r.completion_tokens, 40u * 12);
  EXPECT_EQ(r.prompt_tokens, 40u * 5);
  EXPECT_EQ(r.cached_prompt_tokens, 40u * 4);
  EXPECT_DOUBLE_EQ(PrefixCacheHitRate(r), 0.8);
  EXPECT_EQ(r.ttft_ms.count, 40u);
  // 4 messages of 3 tokens: the 3 after the first bring 9 gaps.
  EXPECT_EQ(r.itl_ms.count, 40u * 9);
  EXPECT_LE(r.ttft_ms.p50, r.ttft_ms.p99);
}

TEST(LoadBenchTest, PlannedCancelsAreCancelledNotErrorsAndErrorsAreCountedByStatus) {
  LoadPlanOptions o = Options();
  o.cancel_fraction = 0.5;
  o.prompt_tokens = {};
  o.prompts = {"fail", "fine"};
  o.vocab_size = 0;
  auto plan = LoadPlan::Make(o);
  ASSERT_TRUE(plan.ok());
  uint64_t expect_fail = 0, expect_cancel = 0;
  for (uint64_t i = 0; i < 200; ++i) {
    const PlannedRequest p = plan->Request(i);
    if (p.request.prompt() == "fail") {
      ++expect_fail;
    } else if (p.cancel_after_tokens > 0) {
      ++expect_cancel;
    }
  }
  ASSERT_GT(expect_fail, 0u);
  ASSERT_GT(expect_cancel, 0u);
  ScriptedOpener opener(*plan, /*group=*/1);
  LoadBenchOptions options;
  options.concurrency = 3;
  options.requests = 200;
  const LoadBenchReport r = RunLoadBench(opener, *plan, options);
  EXPECT_EQ(r.errors, expect_fail);
  EXPECT_EQ(r.errors_by_status.size(), 1u);
  EXPECT_EQ(r.errors_by_status.at("UNAVAILABLE"), expect_fail);
  EXPECT_EQ(r.first_error, "UNAVAILABLE: worker died");
  EXPECT_EQ(r.cancelled, expect_cancel);
  EXPECT_EQ(r.ok, 200 - expect_fail - expect_cancel);
}

TEST(LoadBenchTest, SummarizeTakesNearestRankPercentilesAndTheMean) {
  std::vector<double> values;
  for (int i = 100; i >= 1; --i) values.push_back(i);
  const LatencySummary s = Summarize(values);
  EXPECT_EQ(s.count, 100u);
  EXPECT_DOUBLE_EQ(s.p50, 51);  // rank round(0.5 * 99) = 50 of 1..100
  EXPECT_DOUBLE_EQ(s.p90, 90);
  EXPECT_DOUBLE_EQ(s.p99, 99);
  EXPECT_DOUBLE_EQ(s.mean, 50.5);
  std::vector<double> none;
  EXPECT_EQ(Summarize(none).count, 0u);
}

TEST(LoadBenchTest, TheJsonReportCarriesTheCountsAndPercentiles) {
  LoadBenchOptions options;
  options.concurrency = 2;
  LoadBenchReport r;
  r.started = 5;
  r.ok = 3;
  r.cancelled = 1;
  r.errors = 1;
  r.errors_by_status["RESOURCE_EXHAUSTED"] = 1;
  r.itl_ms.p99 = 4.5;
  const auto json = nlohmann::json::parse(LoadBenchReportJson("gateway x:1", options, r));
  EXPECT_EQ(json.at("target"), "gateway x:1");
  EXPECT_EQ(json.at("started"), 5);
  EXPECT_EQ(json.at("ok"), 3);
  EXPECT_EQ(json.at("cancelled"), 1);
  EXPECT_EQ(json.at("errors_by_status").at("RESOURCE_EXHAUSTED"), 1);
  EXPECT_DOUBLE_EQ(json.at("itl_ms").at("p99").get<double>(), 4.5);
  const std::string text = FormatLoadBenchReport("gateway x:1", options, r);
  EXPECT_NE(text.find("requests: 3 ok, 1 cancelled, 1 errors of 5 started"), std::string::npos)
      << text;
  EXPECT_NE(text.find("errors by status: RESOURCE_EXHAUSTED 1"), std::string::npos) << text;
}

TEST(LoadBenchTest, ReportsThePrefixCacheHitRateAndTheMeanTtft) {
  LoadBenchOptions options;
  LoadBenchReport r;
  r.ok = 4;
  r.prompt_tokens = 2000;
  r.cached_prompt_tokens = 1500;
  r.ttft_ms.count = 4;
  r.ttft_ms.mean = 12.5;
  const auto json = nlohmann::json::parse(LoadBenchReportJson("gateway x:1", options, r));
  EXPECT_EQ(json.at("cached_prompt_tokens"), 1500);
  EXPECT_DOUBLE_EQ(json.at("prefix_cache_hit_rate").get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(json.at("ttft_ms").at("mean").get<double>(), 12.5);
  const std::string text = FormatLoadBenchReport("gateway x:1", options, r);
  EXPECT_NE(text.find("prefix cache: 75.0% of prompt tokens cached (1500 of 2000)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("mean 12.50"), std::string::npos) << text;
  EXPECT_DOUBLE_EQ(PrefixCacheHitRate(LoadBenchReport{}), 0) << "nothing counted: no rate";
}

}  // namespace
}  // namespace smallmind::cli
