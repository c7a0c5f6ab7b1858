// Worker-level metrics: what the gateway knows about each worker at scrape time (its pool link and
// the last WorkerStats it answered) as Prometheus families labelled worker="i", plus the request
// queue depth. Read at scrape time, never pushed, so the poll loop does no metric work.
// WorkerFamilies is pure; RestartDetector is thread-compatible; WorkerStatsCollector is
// thread-safe (scrapes may come from several HTTP threads).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "gateway/workers/worker_pool.h"
#include "smallmind/v1/worker.pb.h"

namespace smallmind::gateway {

// One worker as a scrape sees it.
struct WorkerSnapshot {
  uint32_t index = 0;      // the worker="i" label (timings.worker_id)
  bool healthy = false;    // its last Stats poll answered and no request since saw it down
  uint32_t in_flight = 0;  // requests the gateway has open on it
  uint64_t restarts = 0;
  std::optional<smallmind::v1::WorkerStats> stats;  // last answer; none before the first
};

// smallmind_worker_up / _in_flight_requests / _restarts_total for every worker; the Stats-derived
// series (KV pages, prefix cache, sequences, tokens, preemptions) only for healthy workers that
// answered, so a dead worker's last numbers do not linger; and smallmind_request_queue_depth =
// `gateway_queued` + every healthy worker's waiting sequences (requests accepted but not started).
std::vector<prometheus::MetricFamily> WorkerFamilies(std::span<const WorkerSnapshot> workers,
                                                     uint64_t gateway_queued);

// Counts restarts of workers the gateway did not spawn (--worker-endpoints): an answer from a
// different process (pid or start time) than the previous answer of that worker is one restart.
// Several restarts between two observations count as one.
class RestartDetector {
 public:
  // The restarts of worker `index` so far, counting `stats` (a fresh answer) in.
  uint64_t Observe(uint32_t index, const smallmind::v1::WorkerStats& stats);
  uint64_t restarts(uint32_t index) const;

 private:
  struct Seen {
    bool any = false;
    uint32_t pid = 0;
    uint64_t start_time_unix_ms = 0;
    uint64_t restarts = 0;
  };
  std::vector<Seen> seen_;  // [worker index]
};

// Where the collector gets what the pool does not know.
struct WorkerMetricsSources {
  // Restarts of worker i counted by the supervisor that spawned it; unset for attached workers,
  // whose restarts a RestartDetector sees in their Stats at scrape time.
  std::function<uint64_t(uint32_t index)> supervisor_restarts;
  // Requests held in the gateway's own admission queue; unset = none.
  std::function<uint64_t()> gateway_queued;
};

class WorkerStatsCollector final : public prometheus::Collectable {
 public:
  WorkerStatsCollector(std::shared_ptr<WorkerPool> pool, WorkerMetricsSources sources);

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const std::shared_ptr<WorkerPool> pool_;
  const WorkerMetricsSources sources_;
  mutable std::mutex mu_;
  mutable RestartDetector restarts_;  // guarded by mu_
};

}  // namespace smallmind::gateway
