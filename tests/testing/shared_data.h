// The test data folder (../shared beside the checkout: golden outputs, llama2.c models, tokenizer
// vectors, chat templates), read-only. Tests reach it only through these helpers. Without it a
// test that needs it skips with a message, except under CI (CI=true), where it fails: a CI run
// cannot pass by skipping. Thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace smallmind::testing {

// The folder (canonical path) when it holds models/golden-greedy.jsonl, else "".
std::string SharedDataDir();
// "<folder>/<relative>", whether it exists or not (the folder as configured in CMake's
// SMALLMIND_SHARED_DATA_DIR, ../shared by default).
std::string SharedDataPath(std::string_view relative);
// True when the CI environment variable is set to anything but "", "0" or "false".
bool InCi();
// "" when <folder>/<relative> exists; else a message naming the missing path.
std::string MissingSharedData(std::string_view relative);

}  // namespace smallmind::testing

// In a test body or SetUp(): skips the test (fails it under CI=true) unless the shared data file
// or folder `relative` (e.g. "models/stories260K.bin") exists. Returns from the function.
#define SM_REQUIRE_SHARED_DATA(relative)                                                          \
  do {                                                                                            \
    const std::string sm_missing_shared_data = ::smallmind::testing::MissingSharedData(relative); \
    if (!sm_missing_shared_data.empty()) {                                                        \
      if (::smallmind::testing::InCi()) {                                                         \
        GTEST_FAIL() << sm_missing_shared_data;                                                   \
      } else {                                                                                    \
        GTEST_SKIP() << sm_missing_shared_data;                                                   \
      }                                                                                           \
    }                                                                                             \
  } while (false)
