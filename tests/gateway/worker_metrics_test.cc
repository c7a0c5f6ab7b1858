// Worker-level families from pool snapshots, and restart detection from Stats answers.
#include "gateway/metrics/worker_metrics.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include "shared/worker_stat_table.h"
#include "tests/testing/prometheus_text.h"

namespace smallmind::gateway {
namespace {

testing::MetricsText Render(std::span<const WorkerSnapshot> workers, uint64_t gateway_queued) {
  const std::string text =
      prometheus::TextSerializer().Serialize(WorkerFamilies(workers, gateway_queued));
  auto parsed = testing::ParseMetricsText(text);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString() << "\n" << text;
  return parsed.ok() ? *parsed : testing::MetricsText{};
}

v1::WorkerStats Stats(uint32_t waiting, uint32_t kv_used, uint64_t hits) {
  v1::WorkerStats s;
  auto set = [&s](shared::WorkerStat stat, double value) {
    (*s.mutable_values())[std::string(shared::Describe(stat).name)] = value;
  };
  set(shared::WorkerStat::kWaiting, waiting);
  set(shared::WorkerStat::kRunning, 3);
  set(shared::WorkerStat::kKvPagesUsed, kv_used);
  set(shared::WorkerStat::kKvPagesCapacity, 64);
  set(shared::WorkerStat::kPrefixCacheHits, hits);
  set(shared::WorkerStat::kPreemptions, 2);
  s.set_start_time_unix_ms(1700000000500);
  return s;
}

TEST(WorkerMetricsTest, HealthyWorkersReportTheirStatsUnderTheirLabel) {
  std::vector<WorkerSnapshot> workers(2);
  workers[0] = {0, true, 4, 0, Stats(1, 10, 7)};
  workers[1] = {1, true, 2, 3, Stats(0, 20, 9)};
  const testing::MetricsText m = Render(workers, 0);
  EXPECT_EQ(m.Value("smallmind_kv_pages_used", {{"worker", "0"}}), 10.0);
  EXPECT_EQ(m.Value("smallmind_kv_pages_used", {{"worker", "1"}}), 20.0);
  EXPECT_EQ(m.Value("smallmind_kv_pages_capacity", {{"worker", "1"}}), 64.0);
  EXPECT_EQ(m.Value("smallmind_prefix_cache_hits_total", {{"worker", "1"}}), 9.0);
  EXPECT_EQ(m.Value("smallmind_worker_running_sequences", {{"worker", "0"}}), 3.0);
  EXPECT_EQ(m.Value("smallmind_worker_preemptions_total", {{"worker", "0"}}), 2.0);
  EXPECT_EQ(m.Value("smallmind_worker_in_flight_requests", {{"worker", "0"}}), 4.0);
  EXPECT_EQ(m.Value("smallmind_worker_restarts_total", {{"worker", "1"}}), 3.0);
  EXPECT_EQ(m.Value("smallmind_worker_up", {{"worker", "1"}}), 1.0);
  EXPECT_DOUBLE_EQ(*m.Value("smallmind_worker_start_time_seconds", {{"worker", "0"}}),
                   1700000000.5);
  EXPECT_EQ(m.types.at("smallmind_prefix_cache_hits_total"), "counter");
  EXPECT_EQ(m.types.at("smallmind_kv_pages_used"), "gauge");
}

TEST(WorkerMetricsTest, EveryRowOfTheWorkerStatTableBecomesAFamilyOfItsKind) {
  v1::WorkerStats s;
  for (size_t i = 0; i < shared::kWorkerStatCount; ++i) {
    (*s.mutable_values())[std::string(shared::kWorkerStatTable[i].name)] = 1000.0 + i;
  }
  std::vector<WorkerSnapshot> workers(1);
  workers[0] = {2, true, 0, 0, s};
  const testing::MetricsText m = Render(workers, 0);
  for (size_t i = 0; i < shared::kWorkerStatCount; ++i) {
    const shared::WorkerStatDescriptor& d = shared::kWorkerStatTable[i];
    const std::string name(d.name);
    EXPECT_EQ(m.Value(name, {{"worker", "2"}}), 1000.0 + i) << name;
    EXPECT_EQ(m.types.at(name), d.kind == shared::StatKind::kCounter ? "counter" : "gauge") << name;
  }
}

TEST(WorkerMetricsTest, AStatTheWorkerDidNotSendReadsZero) {
  std::vector<WorkerSnapshot> workers(1);
  workers[0] = {0, true, 0, 0, v1::WorkerStats{}};
  const testing::MetricsText m = Render(workers, 0);
  EXPECT_EQ(m.Value("smallmind_kv_pages_capacity", {{"worker", "0"}}), 0.0);
}

TEST(WorkerMetricsTest, ADownWorkerShowsUpZeroAndNoStaleStats) {
  std::vector<WorkerSnapshot> workers(1);
  workers[0] = {0, false, 0, 1, Stats(5, 10, 7)};
  const testing::MetricsText m = Render(workers, 0);
  EXPECT_EQ(m.Value("smallmind_worker_up", {{"worker", "0"}}), 0.0);
  EXPECT_EQ(m.Value("smallmind_worker_restarts_total", {{"worker", "0"}}), 1.0);
  EXPECT_FALSE(m.Value("smallmind_kv_pages_used", {{"worker", "0"}}).has_value());
  EXPECT_EQ(m.Value("smallmind_request_queue_depth"), 0.0) << "its waiting count is stale";
}

TEST(WorkerMetricsTest, QueueDepthAddsTheGatewayQueueToTheWorkersWaitingSequences) {
  std::vector<WorkerSnapshot> workers(3);
  workers[0] = {0, true, 0, 0, Stats(2, 0, 0)};
  workers[1] = {1, true, 0, 0, Stats(5, 0, 0)};
  workers[2] = {2, true, 0, 0, std::nullopt};  // not answered yet
  EXPECT_EQ(Render(workers, 4).Value("smallmind_request_queue_depth"), 11.0);
}

TEST(RestartDetectorTest, CountsANewPidOrStartTimeAsOneRestart) {
  RestartDetector detector;
  v1::WorkerStats s;
  s.set_pid(100);
  s.set_start_time_unix_ms(5000);
  EXPECT_EQ(detector.Observe(0, s), 0u);
  EXPECT_EQ(detector.Observe(0, s), 0u) << "same process answering again";
  s.set_pid(200);
  s.set_start_time_unix_ms(9000);
  EXPECT_EQ(detector.Observe(0, s), 1u);
  s.set_start_time_unix_ms(12000);  // pid 1 in a container: same pid, new process
  EXPECT_EQ(detector.Observe(0, s), 2u);
  EXPECT_EQ(detector.Observe(3, s), 0u) << "workers are counted apart";
  EXPECT_EQ(detector.restarts(0), 2u);
  EXPECT_EQ(detector.restarts(7), 0u);
}

}  // namespace
}  // namespace smallmind::gateway
