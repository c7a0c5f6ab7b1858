#include "tests/testing/shared_data.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace smallmind::testing {

std::string SharedDataDir() {
  std::error_code ec;
  const std::filesystem::path dir(SMALLMIND_SHARED_DATA_DIR);
  if (!std::filesystem::exists(dir / "models" / "golden-greedy.jsonl", ec)) return "";
  return std::filesystem::canonical(dir, ec).string();
}

std::string SharedDataPath(std::string_view relative) {
  return std::string(SMALLMIND_SHARED_DATA_DIR) + "/" + std::string(relative);
}

bool InCi() {
  const char* ci = std::getenv("CI");
  if (ci == nullptr) return false;
  const std::string_view value(ci);
  return !(value.empty() || value == "0" || value == "false" || value == "FALSE" ||
           value == "False");
}

std::string MissingSharedData(std::string_view relative) {
  const std::string path = SharedDataPath(relative);
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return "";
  std::string message = path + " is absent: the test data folder (../shared beside the checkout";
  message += ", CMake's SMALLMIND_SHARED_DATA_DIR) is missing or incomplete; ";
  message += InCi() ? "CI is set, so this is a failure, not a skip"
                    : "skipped (set CI=true to make this a failure)";
  return message;
}

}  // namespace smallmind::testing
