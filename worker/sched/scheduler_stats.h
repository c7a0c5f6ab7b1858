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
  std::atomic<uint32_t> kv_pages_cached{0};   // unreferenced cached blocks (evictable)
  std::atomic<uint64_t> kv_tokens_stored{0};  // positions holding K/V in used blocks
  std::atomic<uint64_t> kv_token_slots{0};    // positions used blocks could hold
  std::atomic<uint64_t> prefix_cache_lookups_total{0};
  std::atomic<uint64_t> prefix_cache_hits_total{0};  // lookups that reused at least one block
  std::atomic<uint64_t> prefix_cache_hit_blocks_total{0};
  std::atomic<uint64_t> prefix_cache_hit_tokens_total{0};
  std::atomic<uint64_t> prefix_cache_evictions_total{0};
};

}  // namespace smallmind::worker
