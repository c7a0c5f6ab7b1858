// SchedulerStats: the numbers the scheduler thread publishes after each step and service threads
// read for the Stats rpc, one per row of shared/worker_stat_table.h. Thread-safe (relaxed atomics;
// a snapshot need not be consistent across fields).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "shared/worker_stat_table.h"

namespace smallmind::worker {

struct SchedulerStats {
  using Stat = shared::WorkerStat;

  void Set(Stat stat, double value) { At(stat).store(value, std::memory_order_relaxed); }
  void Add(Stat stat, double delta) { At(stat).fetch_add(delta, std::memory_order_relaxed); }
  double Get(Stat stat) const { return At(stat).load(std::memory_order_relaxed); }

  // [kWorkerStatCount] by WorkerStat. Doubles hold every count exactly up to 2^53.
  std::array<std::atomic<double>, shared::kWorkerStatCount> values{};
  // Prompt prefix keys of the prompts whose blocks are cached, most recent first: the first
  // cached_prefix_key_count entries (CachedPrefixes::Live).
  static constexpr int kMaxPrefixKeys = 64;
  std::array<std::atomic<uint64_t>, kMaxPrefixKeys> cached_prefix_keys{};
  std::atomic<uint32_t> cached_prefix_key_count{0};

 private:
  std::atomic<double>& At(Stat stat) { return values[static_cast<size_t>(stat)]; }
  const std::atomic<double>& At(Stat stat) const { return values[static_cast<size_t>(stat)]; }
};

}  // namespace smallmind::worker
