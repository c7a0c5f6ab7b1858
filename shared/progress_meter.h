// ProgressMeter: when a long start-up job (packing a big model's weights) logs its running
// percentage: at most once per interval, and only when the percentage moved, so a slow start is
// not silence and a fast one is not noise (issue 39). Pure: the caller passes the clock's time.
// Owned by the job's one thread; not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace smallmind::shared {

class ProgressMeter {
 public:
  using Clock = std::chrono::steady_clock;

  // `total` units of work (bytes), started at `start`; a line at most every `interval`.
  ProgressMeter(uint64_t total, Clock::duration interval, Clock::time_point start)
      : total_(total), interval_(interval), last_line_(start) {}

  // The percentage (0-99) to log now that `done` of total units are done, or nullopt: less
  // than `interval` since the last line (or the start), no new percent, or the job is done
  // (its own "done in N s" line says so).
  std::optional<int> Update(uint64_t done, Clock::time_point now);

 private:
  const uint64_t total_;
  const Clock::duration interval_;
  Clock::time_point last_line_;
  int last_percent_ = -1;
};

}  // namespace smallmind::shared
