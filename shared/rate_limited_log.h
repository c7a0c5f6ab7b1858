// RateLimitedLog: a warning that may repeat thousands of times a second (a failing accept loop, a
// refused connection) logged at most once per interval, with the count of the lines it held back.
// Thread-safe (lock-free).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

namespace smallmind::shared {

class RateLimitedLog {
 public:
  explicit RateLimitedLog(std::chrono::steady_clock::duration interval) : interval_(interval) {}

  // Logs the line at warn level unless one went out less than an interval ago; returns whether
  // it was logged.
  template <typename... Args>
  bool Warn(spdlog::format_string_t<Args...> format, Args&&... args) {
    if (!Admit()) return false;
    const uint64_t held = held_back_.exchange(0);
    std::string line = fmt::format(format, std::forward<Args>(args)...);
    if (held > 0) line += fmt::format(" ({} more like it held back)", held);
    spdlog::warn("{}", line);
    return true;
  }

  // Lines held back since the last one logged.
  uint64_t held_back() const { return held_back_.load(); }

 private:
  // True for the first call of each interval; counts the others as held back.
  bool Admit();

  const std::chrono::steady_clock::duration interval_;
  std::atomic<int64_t> next_ns_{0};  // steady-clock time from which the next line may go out
  std::atomic<uint64_t> held_back_{0};
};

}  // namespace smallmind::shared
