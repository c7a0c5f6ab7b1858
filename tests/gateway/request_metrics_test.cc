// RequestMetrics: the request-level families, read back through prometheus-cpp's own collection.
#include "gateway/metrics/request_metrics.h"

#include <string>

#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include "tests/testing/prometheus_text.h"

namespace smallmind::gateway {
namespace {

using Seconds = RequestMetrics::Seconds;

testing::MetricsText Scrape(const prometheus::Registry& registry) {
  auto parsed =
      testing::ParseMetricsText(prometheus::TextSerializer().Serialize(registry.Collect()));
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return parsed.ok() ? *parsed : testing::MetricsText{};
}

TEST(RequestMetricsTest, LatencyBucketsSpanTheRangeAtMostAboutOneAndAHalfApart) {
  for (auto [lo, hi] : {std::pair{0.001, 60.0}, std::pair{0.0001, 5.0}}) {
    const std::vector<double> b = LatencyBuckets(lo, hi);
    ASSERT_GE(b.size(), 20u);
    EXPECT_DOUBLE_EQ(b.front(), lo);
    EXPECT_DOUBLE_EQ(b.back(), hi);
    for (size_t i = 1; i < b.size(); ++i) {
      EXPECT_GT(b[i], b[i - 1]);
      EXPECT_LE(b[i] / b[i - 1], 1.7) << "between " << b[i - 1] << " and " << b[i];
    }
  }
}

TEST(RequestMetricsTest, BucketBoundsPrintAsTheirDecimals) {
  prometheus::Registry registry;
  RequestMetrics metrics(registry);
  const std::string text = prometheus::TextSerializer().Serialize(registry.Collect());
  EXPECT_NE(text.find("le=\"0.0015\""), std::string::npos) << text;
  EXPECT_NE(text.find("le=\"60\""), std::string::npos);
  EXPECT_EQ(text.find("0000000"), std::string::npos) << "a bound printed with rounding noise";
  EXPECT_EQ(text.find("9999999"), std::string::npos) << "a bound printed with rounding noise";
}

TEST(RequestMetricsTest, EveryStatusSeriesExistsFromTheStartAndCountsItsCode) {
  prometheus::Registry registry;
  RequestMetrics metrics(registry);
  EXPECT_EQ(Scrape(registry).Value("smallmind_requests_total", {{"status", "UNAVAILABLE"}}), 0.0);
  metrics.ObserveFinished(shared::StatusCode::kOk, 12);
  metrics.ObserveFinished(shared::StatusCode::kOk, 3);
  metrics.ObserveFinished(shared::StatusCode::kResourceExhausted, 0);
  const testing::MetricsText m = Scrape(registry);
  EXPECT_EQ(m.Value("smallmind_requests_total", {{"status", "OK"}}), 2.0);
  EXPECT_EQ(m.Value("smallmind_requests_total", {{"status", "RESOURCE_EXHAUSTED"}}), 1.0);
  EXPECT_EQ(m.Value("smallmind_requests_total", {{"status", "CANCELLED"}}), 0.0);
  EXPECT_EQ(m.Samples("smallmind_requests_total").size(), 11u) << "one series per status code";
  EXPECT_EQ(m.Value("smallmind_prompt_tokens_total"), 15.0);
}

TEST(RequestMetricsTest, FirstTokensGoToTtftAndLaterGroupsToInterTokenLatency) {
  prometheus::Registry registry;
  RequestMetrics metrics(registry);
  metrics.ObserveFirstTokens(Seconds(0.120), 2);
  metrics.ObserveNextTokens(Seconds(0.010), 1);
  metrics.ObserveNextTokens(Seconds(0.030), 3);
  metrics.ObserveNextTokens(Seconds(0.5), 0);  // no tokens: nothing observed
  const testing::MetricsText m = Scrape(registry);
  EXPECT_EQ(m.Value("smallmind_generation_tokens_total"), 6.0);
  EXPECT_EQ(m.Value("smallmind_time_to_first_token_seconds_count"), 1.0);
  EXPECT_DOUBLE_EQ(*m.Value("smallmind_time_to_first_token_seconds_sum"), 0.120);
  EXPECT_EQ(m.Value("smallmind_time_to_first_token_seconds_bucket", {{"le", "0.1"}}), 0.0);
  EXPECT_EQ(m.Value("smallmind_time_to_first_token_seconds_bucket", {{"le", "0.15"}}), 1.0);
  // 1 gap of 10 ms, then 3 gaps of 10 ms each: 4 gaps, 40 ms in all.
  EXPECT_EQ(m.Value("smallmind_inter_token_latency_seconds_count"), 4.0);
  EXPECT_DOUBLE_EQ(*m.Value("smallmind_inter_token_latency_seconds_sum"), 0.040);
  EXPECT_EQ(m.Value("smallmind_inter_token_latency_seconds_bucket", {{"le", "0.0075"}}), 0.0);
  EXPECT_EQ(m.Value("smallmind_inter_token_latency_seconds_bucket", {{"le", "0.01"}}), 4.0);
}

TEST(RequestMetricsTest, AGroupOfTokensCountsAsThatManyEqualGaps) {
  // k tokens after a gap g give the same histogram as k single tokens each g / k apart.
  prometheus::Registry grouped_registry, single_registry;
  RequestMetrics grouped(grouped_registry), single(single_registry);
  for (double gap : {0.00004, 0.0009, 0.0123, 0.7, 3.0, 80.0}) {
    for (size_t k : {2u, 5u, 16u}) {
      grouped.ObserveNextTokens(Seconds(gap), k);
      for (size_t i = 0; i < k; ++i) single.ObserveNextTokens(Seconds(gap / double(k)), 1);
    }
  }
  const auto a = Scrape(grouped_registry).Samples("smallmind_inter_token_latency_seconds_bucket");
  const auto b = Scrape(single_registry).Samples("smallmind_inter_token_latency_seconds_bucket");
  ASSERT_EQ(a.size(), b.size());
  ASSERT_FALSE(a.empty());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].labels, b[i].labels);
    EXPECT_EQ(a[i].value, b[i].value) << "le=" << a[i].labels.at("le");
  }
  EXPECT_GT(a.back().value, a.front().value) << "observations spread over several buckets";
}

TEST(RequestTrackerTest, FirstMessageIsTtftFromTheStartLaterOnesGapsFromThePreviousMessage) {
  prometheus::Registry registry;
  RequestMetrics metrics(registry);
  using std::chrono::milliseconds;
  const RequestTracker::Clock::time_point t0{};
  RequestTracker tracker(&metrics, t0);
  tracker.OnTokens(0, t0 + milliseconds(50));  // a message without tokens changes nothing
  tracker.OnTokens(2, t0 + milliseconds(200));
  tracker.OnTokens(4, t0 + milliseconds(240));
  tracker.OnFinished(shared::StatusCode::kCancelled, 9);
  tracker.OnFinished(shared::StatusCode::kUnavailable, 9);  // ignored: the request ended already
  const testing::MetricsText m = Scrape(registry);
  EXPECT_EQ(m.Value("smallmind_time_to_first_token_seconds_count"), 1.0);
  EXPECT_DOUBLE_EQ(*m.Value("smallmind_time_to_first_token_seconds_sum"), 0.200);
  EXPECT_EQ(m.Value("smallmind_inter_token_latency_seconds_count"), 4.0);
  EXPECT_DOUBLE_EQ(*m.Value("smallmind_inter_token_latency_seconds_sum"), 0.040);
  EXPECT_EQ(m.Value("smallmind_generation_tokens_total"), 6.0);
  EXPECT_EQ(m.Value("smallmind_requests_total", {{"status", "CANCELLED"}}), 1.0);
  EXPECT_EQ(m.Value("smallmind_requests_total", {{"status", "UNAVAILABLE"}}), 0.0);
  EXPECT_EQ(m.Value("smallmind_prompt_tokens_total"), 9.0);
  RequestTracker detached(nullptr, t0);  // no metrics: nothing to observe, nothing breaks
  detached.OnTokens(3, t0);
  detached.OnFinished(shared::StatusCode::kOk, 1);
}

TEST(RequestTrackerTest, AnOkRequestSplitsIntoQueuePrefillAndDecodePhases) {
  prometheus::Registry registry;
  RequestMetrics metrics(registry);
  using std::chrono::milliseconds;
  const RequestTracker::Clock::time_point t0{};
  RequestTracker tracker(&metrics, t0);
  tracker.OnTokens(1, t0 + milliseconds(300));
  tracker.OnTokens(3, t0 + milliseconds(500));
  tracker.OnFinished(shared::StatusCode::kOk, 7, Seconds(0.1), t0 + milliseconds(600));
  const testing::MetricsText m = Scrape(registry);
  EXPECT_EQ(m.Value("smallmind_e2e_request_latency_seconds_count"), 1.0);
  EXPECT_DOUBLE_EQ(*m.Value("smallmind_e2e_request_latency_seconds_sum"), 0.6);
  EXPECT_DOUBLE_EQ(*m.Value("smallmind_request_queue_time_seconds_sum"), 0.1);
  EXPECT_DOUBLE_EQ(*m.Value("smallmind_request_prefill_time_seconds_sum"), 0.2);
  EXPECT_DOUBLE_EQ(*m.Value("smallmind_request_decode_time_seconds_sum"), 0.2);
  EXPECT_EQ(m.types.at("smallmind_request_decode_time_seconds"), "histogram");
}

TEST(RequestTrackerTest, AFailedRequestObservesNoPhases) {
  prometheus::Registry registry;
  RequestMetrics metrics(registry);
  const RequestTracker::Clock::time_point t0{};
  RequestTracker tracker(&metrics, t0);
  tracker.OnTokens(1, t0 + std::chrono::milliseconds(10));
  tracker.OnFinished(shared::StatusCode::kUnavailable, 3, Seconds(0.001),
                     t0 + std::chrono::milliseconds(20));
  const testing::MetricsText m = Scrape(registry);
  EXPECT_EQ(m.Value("smallmind_e2e_request_latency_seconds_count"), 0.0);
  EXPECT_EQ(m.Value("smallmind_request_queue_time_seconds_count"), 0.0);
}

}  // namespace
}  // namespace smallmind::gateway
