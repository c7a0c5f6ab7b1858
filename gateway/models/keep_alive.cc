#include "gateway/models/keep_alive.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include <spdlog/fmt/fmt.h>

namespace smallmind::gateway {
namespace {

constexpr double kMaxMs = 365.0 * 24 * 3600 * 1000;  // a year: longer is "forever" in practice

// Milliseconds in one `unit` of a Go duration ("h", "m", "s", "ms", "us", "µs", "ns"); 0 = none.
double UnitMs(std::string_view unit) {
  if (unit == "h") return 3600.0 * 1000;
  if (unit == "m") return 60.0 * 1000;
  if (unit == "s") return 1000;
  if (unit == "ms") return 1;
  if (unit == "us" || unit == "\xc2\xb5s") return 1e-3;
  if (unit == "ns") return 1e-6;
  return 0;
}

shared::Status Bad(std::string_view text, std::string_view what) {
  return shared::InvalidArgument(fmt::format(
      "{}: `{}` is not a keep-alive duration; give e.g. 5m, 30s, 1h30m, 250ms, a number of "
      "seconds, 0 (unload when idle) or -1 / forever (never unload)",
      what, text));
}

// A number at the front of `text` (digits and at most one '.'), consumed; nullopt when none.
std::optional<double> TakeNumber(std::string_view& text) {
  size_t n = 0;
  bool dot = false;
  while (n < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[n])) || (text[n] == '.' && !dot))) {
    dot = dot || text[n] == '.';
    ++n;
  }
  if (n == 0 || (n == 1 && dot)) return std::nullopt;
  double value = 0;
  const std::string digits(text.substr(0, n));
  value = std::strtod(digits.c_str(), nullptr);
  text.remove_prefix(n);
  return value;
}

}  // namespace

shared::Result<KeepAlive> KeepAliveFromSeconds(double seconds, std::string_view what) {
  if (!std::isfinite(seconds)) return Bad(fmt::format("{}", seconds), what);
  if (seconds < 0) return KeepAlive::Forever();
  if (seconds * 1000 > kMaxMs) return KeepAlive::Forever();
  return KeepAlive{std::chrono::milliseconds(static_cast<int64_t>(std::llround(seconds * 1000)))};
}

shared::Result<KeepAlive> ParseKeepAlive(std::string_view text, std::string_view what) {
  const std::string_view original = text;
  if (text == "forever" || text == "inf" || text == "infinite") return KeepAlive::Forever();
  bool negative = false;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text.empty()) return Bad(original, what);
  double total_ms = 0;
  bool plain = true;  // a bare number (no unit) is seconds, as Ollama reads it
  while (!text.empty()) {
    std::optional<double> number = TakeNumber(text);
    if (!number) return Bad(original, what);
    size_t unit_len = 0;
    while (unit_len < text.size() && !std::isdigit(static_cast<unsigned char>(text[unit_len])) &&
           text[unit_len] != '.') {
      ++unit_len;
    }
    if (unit_len == 0) {
      if (!plain || !text.empty()) return Bad(original, what);
      total_ms = *number * 1000;
      break;
    }
    const double unit = UnitMs(text.substr(0, unit_len));
    if (unit == 0) return Bad(original, what);
    plain = false;
    total_ms += *number * unit;
    text.remove_prefix(unit_len);
  }
  if (negative && total_ms > 0) return KeepAlive::Forever();
  return KeepAliveFromSeconds(total_ms / 1000, what);
}

std::string FormatKeepAlive(const KeepAlive& keep_alive) {
  if (keep_alive.forever()) return "forever";
  const int64_t ms = keep_alive.duration->count();
  if (ms % 1000 == 0) return fmt::format("{}s", ms / 1000);
  return fmt::format("{}ms", ms);
}

bool KeepAliveExpired(const KeepAlive& keep_alive, std::chrono::steady_clock::time_point idle_since,
                      std::chrono::steady_clock::time_point now) {
  if (keep_alive.forever()) return false;
  return now - idle_since >= *keep_alive.duration;
}

}  // namespace smallmind::gateway
