// The pure rules of model residency (issue 45): which loaded models to unload, least recently used
// first, so that one more fits under --memory-budget. No clock and no state of its own: the caller
// (ModelResidency's loader thread) passes what it sees. Thread-compatible.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace smallmind::gateway {

// One model that holds memory now (loaded, or loading).
struct ResidentModel {
  size_t index = 0;    // the caller's id (catalog position)
  uint64_t bytes = 0;  // its estimated resident size
  bool busy = false;   // a request in flight, waiting or about to enter, or still loading
  std::chrono::steady_clock::time_point last_used;
};

// What loading one more model of `need` bytes takes.
struct EvictionPlan {
  enum class Verdict {
    kFits,      // load it after unloading `victims` (empty when it fits as it is)
    kWait,      // busy models hold too much now: wait until some become idle
    kTooLarge,  // it alone exceeds the budget: it can never load
  };
  Verdict verdict = Verdict::kFits;
  std::vector<size_t> victims;  // indexes, least recently used first
};

// `budget_bytes` 0 = no budget (always fits). Idle models go least recently used first (ties by
// index) until the sum of what stays plus `need` is within the budget; busy ones never go.
EvictionPlan PlanEvictions(uint64_t budget_bytes, uint64_t need,
                           std::span<const ResidentModel> resident);

}  // namespace smallmind::gateway
