// SchedulerStats: counters the scheduler thread publishes after each step and service threads read
// for the Stats rpc. Thread-safe (relaxed atomics; a snapshot need not be consistent across
// fields).
#pragma once

#include <atomic>
#include <cstdint>

namespace smallmind::worker {

struct SchedulerStats {
  std::atomic<uint32_t> running{0};
  std::atomic<uint32_t> waiting{0};
  std::atomic<uint32_t> kv_pages_used{0};
  std::atomic<uint32_t> kv_pages_total{0};
  std::atomic<uint64_t> requests_total{0};
  std::atomic<uint64_t> prompt_tokens_total{0};
  std::atomic<uint64_t> generation_tokens_total{0};
  std::atomic<uint64_t> preemptions_total{0};
};

}  // namespace smallmind::worker
