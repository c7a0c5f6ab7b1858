// Runs the tests' node scripts (tests/http/*.mjs) with the official `openai` npm client that
// scripts/install_deps.sh puts in tests/http/node_modules. Header-only.
#pragma once

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/testing/child_process.h"
#include "tests/testing/shared_data.h"

namespace smallmind::testing {

inline const std::string kHttpTestsDir = std::string(SMALLMIND_SOURCE_DIR) + "/tests/http";

// Why node tests cannot run here ("" = they can).
inline std::string NodeMissing() {
  auto probe = ChildProcess::Spawn({"/usr/bin/env", "node", "--version"});
  if (!probe.ok() || (*probe)->Wait(std::chrono::milliseconds(30000)) != 0) {
    return "node is not installed (scripts/install_deps.sh installs it)";
  }
  if (!std::filesystem::exists(kHttpTestsDir + "/node_modules/openai") ||
      !std::filesystem::exists(kHttpTestsDir + "/node_modules/@anthropic-ai/sdk")) {
    return "tests/http/node_modules lacks the openai or @anthropic-ai/sdk client: run "
           "scripts/install_deps.sh";
  }
  return "";
}

// In a test body: skips the test when node or the openai client is missing (fails it under CI).
#define SM_REQUIRE_NODE()                                                 \
  do {                                                                    \
    const std::string node_missing = ::smallmind::testing::NodeMissing(); \
    if (!node_missing.empty()) {                                          \
      if (::smallmind::testing::InCi()) FAIL() << node_missing;           \
      GTEST_SKIP() << node_missing;                                       \
    }                                                                     \
  } while (0)

// Runs tests/http/`script` with `args` (and `env`, NAME=VALUE, added to the environment); prints
// its output and returns its exit status (0 = every check passed).
inline int RunNode(const std::string& script, const std::vector<std::string>& args,
                   const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv = {"/usr/bin/env"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.push_back("node");
  argv.push_back(kHttpTestsDir + "/" + script);
  argv.insert(argv.end(), args.begin(), args.end());
  auto child = ChildProcess::Spawn(argv);
  EXPECT_TRUE(child.ok()) << child.status().ToString();
  if (!child.ok()) return -1;
  for (int lines = 0; lines < 10000; ++lines) {
    auto line = (*child)->WaitForLine("", std::chrono::milliseconds(300000));
    if (!line.ok()) break;
    std::printf("node: %s\n", line->c_str());
  }
  return (*child)->Wait(std::chrono::milliseconds(60000));
}

// The model id the gateway serves for `--model spec` by default (--served-model-name unset): the
// file's name without its folder; a builtin: spec as it is.
inline std::string ServedName(const std::string& spec) {
  if (spec.starts_with("builtin:")) return spec;
  return std::filesystem::path(spec).filename().string();
}

}  // namespace smallmind::testing
