// GatewayMetrics with several served models: each model's request and worker families carry
// model="<id>", and a family two models share is one family in the scrape (no name twice).
#include "gateway/metrics/gateway_metrics.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/testing/prometheus_text.h"

namespace smallmind::gateway {
namespace {

TEST(GatewayMetricsTest, TwoModelsShareEachFamilyWithAModelLabel) {
  GatewayMetrics metrics;
  metrics.requests("a").ObserveFinished(shared::StatusCode::kOk, 5);
  metrics.requests("b").ObserveFinished(shared::StatusCode::kOk, 7);
  metrics.requests("b").ObserveFinished(shared::StatusCode::kNotFound, 0);
  for (const char* model : {"a", "b"}) {
    WorkerMetricsSources sources;
    const uint64_t queued = std::string(model) == "a" ? 2 : 3;
    sources.gateway_queued = [queued] { return queued; };
    metrics.AttachWorkers(
        std::make_shared<WorkerPool>(std::vector<std::string>{}, WorkerPoolOptions{}),
        std::move(sources), model);
  }
  const std::vector<prometheus::MetricFamily> families = metrics.Collect();
  std::vector<std::string> names;
  for (const auto& family : families) {
    EXPECT_EQ(std::count(names.begin(), names.end(), family.name), 0) << family.name;
    names.push_back(family.name);
  }
  auto text = testing::ParseMetricsText(metrics.RenderText());
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(text->Value("smallmind_requests_total", {{"status", "OK"}, {"model", "a"}}), 1.0);
  EXPECT_EQ(text->Value("smallmind_requests_total", {{"status", "OK"}, {"model", "b"}}), 1.0);
  EXPECT_EQ(text->Value("smallmind_requests_total", {{"status", "NOT_FOUND"}, {"model", "b"}}),
            1.0);
  EXPECT_EQ(text->Value("smallmind_prompt_tokens_total", {{"model", "b"}}), 7.0);
  EXPECT_EQ(text->Value("smallmind_request_queue_depth", {{"model", "a"}}), 2.0);
  EXPECT_EQ(text->Value("smallmind_request_queue_depth", {{"model", "b"}}), 3.0);
}

}  // namespace
}  // namespace smallmind::gateway
