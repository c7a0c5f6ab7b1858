// The `smallmind` CLI's benches as a user runs them: the offline engine bench prints one row per
// path and thread count; the load generator against a real gateway (or a worker directly) reports
// its requests by outcome, as text or JSON, with deliberate client cancels apart from errors.
#include <sys/wait.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/integration/cli_process.h"
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

// --kv-dtype picks the engine's cache as the worker's flag does (the header names it; f16 by
// default); q8 on stories260K, whose heads have 8 dims, is refused with the worker's message.
TEST(CliBenchTest, OfflineBenchTakesTheWorkersKvTypes) {
  const std::string cli = testing::BinaryPath("smallmind");
  const std::vector<std::string> base = {cli,   "bench",         "--offline", "--threads",
                                         "1",   "--repetitions", "1",         "--paths",
                                         "par", "--no-recompute"};
  const testing::ProgramRun def = testing::RunToExit(base);
  ASSERT_EQ(def.exit_code, 0) << def.err;
  EXPECT_NE(def.out.find("KV cache f16"), std::string::npos) << def.out;
  std::vector<std::string> f32 = base;
  f32.insert(f32.end(), {"--kv-dtype", "F32"});
  const testing::ProgramRun floats = testing::RunToExit(f32);
  ASSERT_EQ(floats.exit_code, 0) << floats.err;
  EXPECT_NE(floats.out.find("KV cache f32"), std::string::npos) << floats.out;
  std::vector<std::string> q8 = base;
  q8.insert(q8.end(), {"--kv-dtype", "q8"});
  const testing::ProgramRun refused = testing::RunToExit(q8);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("--kv-dtype q8 needs a head size"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("8 dims"), std::string::npos) << refused.err;
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
  EXPECT_EQ(lines[0], "requests: 8 ok, 0 cancelled, 0 errors of 8 started (gateway " +
                          (*gateway)->address() + ", concurrency 4, 8 requests)");
}

// Runs `smallmind bench ... --json` to its exit; returns the report.
nlohmann::json RunBenchJson(const std::vector<std::string>& args, int* exit_status) {
  std::vector<std::string> argv = {testing::BinaryPath("smallmind"), "bench", "--json"};
  argv.insert(argv.end(), args.begin(), args.end());
  const testing::ProgramRun run = testing::RunToExit(argv);
  *exit_status = run.exit_code;
  const auto json = nlohmann::json::parse(run.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(json.is_discarded()) << run.out << run.err;
  return json;
}

TEST(CliBenchTest, DurationModeWithMixedLengthsAndClientCancelsHasNoErrors) {
  auto gateway = testing::GatewayFixture::Start({});
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  int status = -1;
  const nlohmann::json r = RunBenchJson(
      {"--addr", (*gateway)->address(), "--prompt-tokens", "4:64", "--max-tokens", "8:48",
       "--cancel-fraction", "0.5", "--duration", "1500ms", "--concurrency", "4", "--seed", "3"},
      &status);
  ASSERT_EQ(status, 0) << r.dump();
  EXPECT_EQ(r.at("errors"), 0) << r.dump();
  EXPECT_GT(r.at("ok").get<int>(), 0) << r.dump();
  EXPECT_GT(r.at("cancelled").get<int>(), 0) << "half the requests cancel mid-stream";
  EXPECT_EQ(r.at("started").get<int>(), r.at("ok").get<int>() + r.at("cancelled").get<int>());
  EXPECT_EQ(r.at("requests_bound"), 0) << "--duration alone bounds the run";
  EXPECT_GT(r.at("completion_tokens").get<int>(), 0);
  EXPECT_GT(r.at("itl_ms").at("count").get<int>(), 0);
  EXPECT_GE(r.at("ttft_ms").at("p99").get<double>(), r.at("ttft_ms").at("p50").get<double>());
}

TEST(CliBenchTest, BenchCallsAWorkerDirectlyWithWorkerFlag) {
  auto gateway = testing::GatewayFixture::Start({});
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  const std::string worker = (*gateway)->WorkerTarget(0);
  ASSERT_FALSE(worker.empty());
  int status = -1;
  const nlohmann::json r = RunBenchJson({"--addr", worker, "--worker", "--prompt-tokens", "8",
                                         "--max-tokens", "16", "--requests", "6", "--seed", "1"},
                                        &status);
  ASSERT_EQ(status, 0) << r.dump();
  EXPECT_EQ(r.at("ok"), 6);
  EXPECT_EQ(r.at("prompt_tokens"), 6 * 9) << "8 ids and the BOS the worker adds, per request";
  EXPECT_EQ(r.at("target"), "worker " + worker);
  // The gateway's Inference service is not on a worker's socket: without --worker it fails.
  const nlohmann::json wrong =
      RunBenchJson({"--addr", worker, "hi", "--requests", "2", "--concurrency", "1"}, &status);
  EXPECT_EQ(status, 1);
  EXPECT_EQ(wrong.value("errors_by_status", nlohmann::json()).value("UNIMPLEMENTED", 0), 2)
      << wrong.dump();
}

// Token prompts longer than the served model's context are refused before any request starts
// (naming the context and the longest that fits), not counted as INVALID_ARGUMENT errors in the
// middle of the load; shared prefixes count toward the length.
TEST(CliBenchTest, BenchRefusesTokenPromptsLongerThanTheServedContext) {
  auto gateway = testing::GatewayFixture::Start({});
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  const std::string cli = testing::BinaryPath("smallmind");
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--prompt-tokens", "4:100000"},
        std::vector<std::string>{"--shared-prefixes", "2", "--prefix-tokens", "100000"}}) {
    std::vector<std::string> argv = {cli,          "bench", "--addr", (*gateway)->address(),
                                     "--requests", "4"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    const testing::ProgramRun run = testing::RunToExit(argv);
    EXPECT_EQ(run.exit_code, 1) << flags[0] << ": " << run.err;
    EXPECT_NE(run.err.find("the served model's context is"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("ids leave room for a new token"), std::string::npos) << run.err;
    EXPECT_EQ(run.out.find("requests:"), std::string::npos) << "no request started: " << run.out;
  }
}

TEST(CliBenchTest, BenchRefusesTwoPromptSourcesAndAnUnboundedRun) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"bench", "hi", "--prompt-tokens", "8"},
        std::vector<std::string>{"bench", "--prompt-tokens", "8", "--requests", "0"},
        std::vector<std::string>{"bench", "--prompt-tokens", "9:3"},
        std::vector<std::string>{"bench", "hi", "--duration", "2x"}}) {
    std::vector<std::string> argv = {testing::BinaryPath("smallmind")};
    argv.insert(argv.end(), args.begin(), args.end());
    const testing::ProgramRun run = testing::RunToExit(argv);
    EXPECT_EQ(run.exit_code, 2) << args[1] << " " << args[2] << ": " << run.err;
    EXPECT_EQ(run.out, "");
  }
}

}  // namespace
}  // namespace smallmind
