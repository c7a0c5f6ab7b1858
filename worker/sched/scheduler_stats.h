// SchedulerStats: counters the scheduler thread publishes after each step and service threads read
// for the Stats rpc. Thread-safe (relaxed atomics; a snapshot need not be consistent across
// fields).
#pragma once

#include <array>
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
  // Steps and the tokens they fed (WorkerStats fields 30-39).
  std::atomic<uint64_t> steps_total{0};
  std::atomic<uint64_t> prefill_tokens_total{0};  // prompt chunks and recomputation
  std::atomic<uint64_t> decode_tokens_total{0};   // one just-sampled token per sequence and step
  std::atomic<uint64_t> context_shifts_total{0};
  std::atomic<double> tokens_per_step{0};     // recent average (exponential, see Scheduler)
  std::atomic<double> sequences_per_step{0};  // recent average batch size
  // Prompt prefix keys of the prompts whose blocks are cached, most recent first: the first
  // cached_prefix_key_count entries (CachedPrefixes::Live).
  static constexpr int kMaxPrefixKeys = 64;
  std::array<std::atomic<uint64_t>, kMaxPrefixKeys> cached_prefix_keys{};
  std::atomic<uint32_t> cached_prefix_key_count{0};
};

}  // namespace smallmind::worker
