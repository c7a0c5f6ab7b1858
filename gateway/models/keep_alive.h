// KeepAlive: how long a model's workers stay up after its last request, in Ollama's syntax
// (`--keep-alive`, a request's `keep_alive`): "5m", "30s", "1h30m", "250ms", a plain number of
// seconds, "0" (unload as soon as it is idle) or a negative value / "forever" (never unload).
// Parsed once at the edge (flags, HTTP bodies); plain data, thread-compatible.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "shared/status.h"

namespace smallmind::gateway {

struct KeepAlive {
  // nullopt = forever; zero = unload as soon as no request is in flight.
  std::optional<std::chrono::milliseconds> duration = std::chrono::minutes(5);

  static KeepAlive Forever() { return KeepAlive{std::nullopt}; }
  bool forever() const { return !duration.has_value(); }
  bool operator==(const KeepAlive&) const = default;
};

// "5m", "1h30m", "1.5h", "250ms", "30" (seconds), "0", "-1", "-5m", "forever"; INVALID_ARGUMENT
// naming `what` (the flag or field) and the accepted forms otherwise.
shared::Result<KeepAlive> ParseKeepAlive(std::string_view text, std::string_view what);
// A JSON number of seconds (Ollama's `keep_alive: 300`): negative = forever.
shared::Result<KeepAlive> KeepAliveFromSeconds(double seconds, std::string_view what);
// "5m0s"-free text for logs and /v1/models: "forever", "0s", "300s", "1500ms".
std::string FormatKeepAlive(const KeepAlive& keep_alive);

// True when a model idle since `idle_since` (no request in flight from then on) should be
// unloaded at `now` under `keep_alive`. Pure: the caller's clock decides what now is.
bool KeepAliveExpired(const KeepAlive& keep_alive, std::chrono::steady_clock::time_point idle_since,
                      std::chrono::steady_clock::time_point now);

}  // namespace smallmind::gateway
