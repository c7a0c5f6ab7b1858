// The `smallmind` CLI's benches as a user runs them: the offline engine bench prints one row per
// path and thread count; the load generator against a real gateway reports every request ok.
#include <sys/wait.h>

#include <gtest/gtest.h>

#include "tests/testing/rpc/gateway_fixture.h"

namespace smallmind {
namespace {

using std::chrono::milliseconds;

// Runs the CLI to exit; returns its stdout lines containing '|' (table rows) or "requests:".
std::vector<std::string> RunCli(const std::vector<std::string>& args, int* exit_status) {
  std::vector<std::string> argv = {testing::BinaryPath("smallmind")};
  argv.insert(argv.end(), args.begin(), args.end());
  auto child = testing::ChildProcess::Spawn(argv);
  EXPECT_TRUE(child.ok()) << child.status().ToString();
  std::vector<std::string> lines;
  if (!child.ok()) return lines;
  while (true) {
    auto line = (*child)->WaitForLine("", milliseconds(120000));
    if (!line.ok()) break;  // stdout closed: the CLI exited
    lines.push_back(*line);
  }
  *exit_status = (*child)->Wait(milliseconds(60000));
  return lines;
}

TEST(CliBenchTest, OfflineBenchPrintsARowPerPathAndThreadCount) {
  int status = -1;
  std::vector<std::string> lines = RunCli(
      {"bench", "--offline", "--threads", "1,2", "--repetitions", "1", "--no-recompute"}, &status);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  int rows = 0;
  for (const std::string& l : lines) {
    if (l.rfind("| parallel |", 0) == 0 || l.rfind("| deterministic |", 0) == 0) ++rows;
  }
  EXPECT_EQ(rows, 4) << "2 paths x 2 thread counts";
}

TEST(CliBenchTest, OfflineBenchRefusesAMissingModelFile) {
  int status = -1;
  RunCli({"bench", "--offline", "--model", "/nonexistent/model.gguf"}, &status);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1);
}

TEST(CliBenchTest, LoadBenchAgainstAGatewayReportsEveryRequestOk) {
  auto gateway = testing::GatewayFixture::Start({});
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  int status = -1;
  std::vector<std::string> lines =
      RunCli({"bench", "load me", "--addr", (*gateway)->address(), "--concurrency", "4",
              "--requests", "8", "--max-tokens", "16", "--seed", "1"},
             &status);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "requests: 8 ok, 0 failed (concurrency 4, max_new_tokens 16)");
}

}  // namespace
}  // namespace smallmind
