#include "gateway/router.h"

namespace smallmind::gateway {

std::optional<size_t> Route(std::span<const WorkerLoad> loads, uint64_t cursor) {
  const size_t n = loads.size();
  if (n == 0) return std::nullopt;
  const size_t start = static_cast<size_t>(cursor % n);
  std::optional<size_t> best;
  // Visiting from `start` round the ring and keeping only strictly smaller loads makes the first
  // tie after the cursor win.
  for (size_t k = 0; k < n; ++k) {
    const size_t i = (start + k) % n;
    if (!loads[i].healthy) continue;
    if (!best || loads[i].in_flight < loads[*best].in_flight) best = i;
  }
  return best;
}

}  // namespace smallmind::gateway
