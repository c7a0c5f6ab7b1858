// `smallmind chat` and `smallmind models` as a person runs them, against a real gateway + worker
// on its HTTP door: a piped conversation with commands, Ctrl-C (SIGINT) stopping an answer on the
// worker without leaving, and the model list.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "shared/worker_stat_table.h"
#include "tests/testing/child_process.h"
#include "tests/testing/rpc/gateway_fixture.h"
#include "tests/testing/scoped_temp_dir.h"
#include "tests/testing/test_models.h"

namespace smallmind {
namespace {

using namespace std::chrono_literals;

struct Transcript {
  std::vector<std::string> lines;  // stdout and stderr together
  int status = -1;                 // raw wait status
  bool Has(const std::string& needle) const {
    for (const std::string& l : lines) {
      if (l.find(needle) != std::string::npos) return true;
    }
    return false;
  }
  int Count(const std::string& needle) const {
    int n = 0;
    for (const std::string& l : lines) n += l.find(needle) != std::string::npos;
    return n;
  }
};

// `smallmind ARGS < input` with stderr into stdout; `input` is written to a file in `dir` first.
std::unique_ptr<testing::ChildProcess> Start(const testing::ScopedTempDir& dir,
                                             const std::string& args, const std::string& input) {
  const std::string in = dir.path() + "/input.txt";
  std::ofstream(in) << input;
  auto child = testing::ChildProcess::Spawn(
      {"/bin/sh", "-c",
       "exec " + testing::BinaryPath("smallmind") + " " + args + " < " + in + " 2>&1"});
  EXPECT_TRUE(child.ok()) << child.status().ToString();
  return child.ok() ? std::move(child).value() : nullptr;
}

Transcript Finish(testing::ChildProcess& child) {
  Transcript run;
  for (int i = 0; i < 100000; ++i) {
    auto line = child.WaitForLine("", 120s);
    if (!line.ok()) break;
    run.lines.push_back(*line);
  }
  run.status = child.Wait(60s);
  for (const std::string& l : run.lines) std::printf("smallmind: %s\n", l.c_str());
  return run;
}

TEST(ChatCommandTest, APipedConversationStreamsAnswersAndFollowsTheCommands) {
  testing::GatewayOptions options;
  options.http = true;
  options.api_key = "chat-key";
  auto gateway = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  const testing::ScopedTempDir dir;
  auto child = Start(dir,
                     "chat --addr " + (*gateway)->http_address() +
                         " --api-key chat-key --max-tokens 5 --temperature 0",
                     "Hello\\\nthere\n/system Be brief.\n/model nope\nHi\n/model builtin:tiny\n"
                     "/reset\n/help\n/what\nOnce more\n");
  ASSERT_NE(child, nullptr);
  const Transcript run = Finish(*child);
  EXPECT_TRUE(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0) << run.status;
  EXPECT_EQ(run.Count("5 generated · length]"), 2) << "two answers of 5 tokens";
  EXPECT_TRUE(run.Has("TTFT ")) << "the stats line";
  EXPECT_TRUE(run.Has("[system prompt set; conversation reset]"));
  EXPECT_TRUE(run.Has("[error: 404: ")) << "the unknown model is the server's 404";
  EXPECT_TRUE(run.Has("[conversation reset]"));
  EXPECT_TRUE(run.Has("/system TEXT")) << "/help";
  EXPECT_TRUE(run.Has("[unknown command /what"));
  EXPECT_FALSE(run.Has("> ")) << "no prompt when stdin is not a terminal";
}

TEST(ChatCommandTest, CtrlCStopsTheAnswerOnTheWorkerAndTheChatGoesOn) {
  const testing::ScopedTempDir models;  // outlives the gateway that maps the file
  testing::GatewayOptions options;
  options.model = testing::LongContextTinyModel(models);
  ASSERT_FALSE(options.model.empty()) << "smallmind-modelgen failed";
  options.http = true;
  auto gateway = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  const testing::ScopedTempDir dir;
  auto child =
      Start(dir, "chat --addr " + (*gateway)->http_address() + " --max-tokens 8000 --ignore-eos",
            "Tell me everything\n/reset\n");
  ASSERT_NE(child, nullptr);
  // Once the answer runs on the worker (bounded polls), Ctrl-C.
  bool running = false;
  for (int i = 0; i < 1000 && !running; ++i) {
    auto stats = (*gateway)->WorkerStats(0);
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    running = shared::ReadWorkerStat(stats->values(), shared::WorkerStat::kRunning) > 0;
    if (!running) std::this_thread::sleep_for(5ms);
  }
  ASSERT_TRUE(running) << "the answer never started";
  child->Signal(SIGINT);
  const Transcript run = Finish(*child);
  EXPECT_TRUE(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0) << run.status;
  EXPECT_TRUE(run.Has("stopped]")) << "the stats line of the stopped answer";
  EXPECT_TRUE(run.Has("[conversation reset]")) << "the chat went on after Ctrl-C";
  const shared::Result<v1::WorkerStats> idle = (*gateway)->WaitForIdleWorker(0);
  ASSERT_TRUE(idle.ok()) << idle.status().ToString();
  EXPECT_EQ(shared::ReadWorkerStat(idle->values(), shared::WorkerStat::kRunning), 0u);
  EXPECT_LT(shared::ReadWorkerStat(idle->values(), shared::WorkerStat::kGenerationTokens), 8000u)
      << "the answer ran to the end instead of being cancelled";
}

TEST(ModelsCommandTest, ListsTheServedModelWithItsFacts) {
  testing::GatewayOptions options;
  options.http = true;
  auto gateway = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  const testing::ScopedTempDir dir;
  auto child = Start(dir, "models --addr " + (*gateway)->http_address(), "");
  ASSERT_NE(child, nullptr);
  const Transcript run = Finish(*child);
  EXPECT_TRUE(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0) << run.status;
  ASSERT_EQ(run.lines.size(), 2u);
  EXPECT_EQ(run.lines[0].rfind("MODEL", 0), 0u) << run.lines[0];
  EXPECT_EQ(run.lines[1].rfind("builtin:tiny ", 0), 0u) << run.lines[1];
  EXPECT_NE(run.lines[1].find("llama"), std::string::npos) << run.lines[1];
  // A gateway that is not there is an error naming the address, exit 1.
  auto missing = Start(dir, "models --addr http://127.0.0.1:1", "");
  ASSERT_NE(missing, nullptr);
  const Transcript refused = Finish(*missing);
  EXPECT_TRUE(WIFEXITED(refused.status) && WEXITSTATUS(refused.status) == 1) << refused.status;
  EXPECT_TRUE(refused.Has("127.0.0.1:1")) << "the error names the address";
}

}  // namespace
}  // namespace smallmind
