// The stored conformance files of one kind (tests/data/conformance/*<suffix>) and the model of a
// case made again by smallmind-modelgen from its stored flags ("{shared}" standing for the
// ../shared folder), for the embedding and rerank conformance tests. Header-only test helper;
// thread-compatible.
#pragma once

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "tests/testing/child_process.h"
#include "tests/testing/scoped_temp_dir.h"
#include "tests/testing/shared_data.h"

namespace smallmind::worker::testing {

inline constexpr std::string_view kSharedMark = "{shared}";  // in stored flags: ../shared

// The names of the files in tests/data/conformance ending in `suffix`, sorted.
inline std::vector<std::string> ConformanceFiles(std::string_view suffix) {
  std::vector<std::string> files;
  const std::filesystem::path dir =
      std::filesystem::path(SMALLMIND_SOURCE_DIR) / "tests/data/conformance";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(suffix)) files.push_back(name);
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Runs smallmind-modelgen with `flags` into `dir`; the file's path, or "" on failure.
inline std::string GenerateModel(const std::vector<std::string>& flags, const std::string& name,
                                 const smallmind::testing::ScopedTempDir& dir) {
  std::vector<std::string> argv = {smallmind::testing::BinaryPath("smallmind-modelgen")};
  for (std::string f : flags) {
    const size_t at = f.find(kSharedMark);
    if (at != std::string::npos) {
      f.replace(at, kSharedMark.size(), smallmind::testing::SharedDataDir());
    }
    argv.push_back(f);
  }
  const std::string out = dir.File(name + ".gguf");
  argv.insert(argv.end(), {"-o", out});
  auto child = smallmind::testing::ChildProcess::Spawn(argv);
  if (!child.ok()) return "";
  return (*child)->Wait(std::chrono::milliseconds(60000)) == 0 ? out : "";
}

}  // namespace smallmind::worker::testing
