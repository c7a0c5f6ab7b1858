// Process-wide spdlog setup (the one allowed process-wide object, STYLE §5). Call once from main().
#pragma once

#include <string_view>

namespace smallmind::shared {

// Logs to stderr with a "[time] [process] [level] message" pattern. `level` is an spdlog level name
// ("info", "debug", ...); an unknown name keeps info.
void InitLogging(std::string_view process_name, std::string_view level);

// The level names InitLogging understands, for configs to check their --log-level against.
inline constexpr char kLogLevelNames[] = "trace, debug, info, warn, error, critical, off";
bool IsLogLevelName(std::string_view level);

}  // namespace smallmind::shared
