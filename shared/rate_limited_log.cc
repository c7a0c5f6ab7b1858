#include "shared/rate_limited_log.h"

namespace smallmind::shared {

bool RateLimitedLog::Admit() {
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  int64_t next = next_ns_.load();
  const int64_t step = std::chrono::duration_cast<std::chrono::nanoseconds>(interval_).count();
  while (now >= next) {
    if (next_ns_.compare_exchange_weak(next, now + step)) return true;
  }
  held_back_.fetch_add(1);
  return false;
}

}  // namespace smallmind::shared
