#include "shared/log.h"

#include <memory>
#include <string>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace smallmind::shared {

void InitLogging(std::string_view process_name, std::string_view level) {
  auto logger = spdlog::stderr_logger_mt(std::string(process_name));
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%n] [%l] %v");
  auto parsed = spdlog::level::from_str(std::string(level));
  if (parsed == spdlog::level::off && level != "off") parsed = spdlog::level::info;
  spdlog::set_level(parsed);
  spdlog::flush_on(spdlog::level::info);
}

bool IsLogLevelName(std::string_view level) {
  return level == "off" || spdlog::level::from_str(std::string(level)) != spdlog::level::off;
}

}  // namespace smallmind::shared
