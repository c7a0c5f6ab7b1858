#include "gateway/workers/router.h"

namespace smallmind::gateway {
namespace {

// Strictly less loaded: outstanding tokens, then requests in flight, then KV use. Equal loads
// keep the earlier candidate.
bool LessLoaded(const WorkerLoad& a, const WorkerLoad& b) {
  if (a.outstanding_tokens != b.outstanding_tokens) {
    return a.outstanding_tokens < b.outstanding_tokens;
  }
  if (a.in_flight != b.in_flight) return a.in_flight < b.in_flight;
  return a.kv_used < b.kv_used;
}

}  // namespace

std::optional<RouteDecision> Route(std::span<const WorkerLoad> loads, uint64_t cursor,
                                   const RouteOptions& options) {
  const size_t n = loads.size();
  if (n == 0) return std::nullopt;
  const size_t start = static_cast<size_t>(cursor % n);
  std::optional<size_t> least;     // least loaded
  std::optional<size_t> affinity;  // longest prefix match, least loaded among equal matches
  // Visiting from `start` round the ring and keeping only strict improvements makes the first
  // tie after the cursor win.
  for (size_t k = 0; k < n; ++k) {
    const size_t i = (start + k) % n;
    const WorkerLoad& w = loads[i];
    if (!w.healthy) continue;
    if (!least || LessLoaded(w, loads[*least])) least = i;
    if (w.prefix_match_bytes == 0) continue;
    if (!affinity || w.prefix_match_bytes > loads[*affinity].prefix_match_bytes ||
        (w.prefix_match_bytes == loads[*affinity].prefix_match_bytes &&
         LessLoaded(w, loads[*affinity]))) {
      affinity = i;
    }
  }
  if (!least) return std::nullopt;
  if (options.prefix_affinity && affinity && *affinity != *least) {
    const uint64_t extra =
        loads[*affinity].outstanding_tokens - loads[*least].outstanding_tokens;  // >= 0
    if (extra <= options.affinity_threshold_tokens) return RouteDecision{*affinity, true};
  }
  return RouteDecision{*least, false};
}

}  // namespace smallmind::gateway
