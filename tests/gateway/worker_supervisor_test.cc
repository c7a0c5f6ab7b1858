// The supervisor is driven here with small shell scripts standing in for smallmind-worker, so that
// spawning, readiness failures, restarts and shutdown are tested without a model.
#include "gateway/workers/worker_supervisor.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/testing/scoped_temp_dir.h"

namespace smallmind::gateway {
namespace {

constexpr std::chrono::milliseconds kWait{10000};

TEST(WorkerSupervisorTest, WorkerArgvCarriesModelSocketIdCpusAndThreads) {
  WorkerLaunch launch{"/bin/w", "builtin:tiny", "", "/tmp/d/worker-1.sock", 1, {4, 5, 6, 7}, 4, "",
                      {}};
  EXPECT_EQ(WorkerArgv(launch),
            (std::vector<std::string>{"/bin/w", "--model", "builtin:tiny", "--listen",
                                      "unix:/tmp/d/worker-1.sock", "--worker-id", "1", "--cpus",
                                      "4-7", "--threads", "4", "--exit-with-parent"}));
  launch.tokenizer = "tok.bin";
  const auto argv = WorkerArgv(launch);
  EXPECT_EQ(argv[3], "--tokenizer");
  EXPECT_EQ(argv[4], "tok.bin");
}

TEST(WorkerSupervisorTest, WorkerArgvEndsWithTheKvSegmentNameWhenThereIsOne) {
  WorkerLaunch launch{"/bin/w", "builtin:tiny",           "", "/tmp/d/worker-1.sock", 1, {0},
                      1,        "smallmind-12-abcXYZ-w1", {}};
  const auto argv = WorkerArgv(launch);
  ASSERT_GE(argv.size(), 2u);
  EXPECT_EQ(argv[argv.size() - 2], "--kv-segment");
  EXPECT_EQ(argv.back(), "smallmind-12-abcXYZ-w1");
}

TEST(WorkerSupervisorTest, WorkerArgvEndsWithTheExtraWorkerFlags) {
  WorkerLaunch launch{"/bin/w", "builtin:tiny", "", "/tmp/d/worker-1.sock", 1, {0}, 1, "seg", {}};
  launch.extra_flags = {"--kv-dtype", "f32", "--max-seqs=64"};
  const auto argv = WorkerArgv(launch);
  ASSERT_GE(argv.size(), 5u);
  EXPECT_EQ(
      (std::vector<std::string>(argv.end() - 5, argv.end())),
      (std::vector<std::string>{"--kv-segment", "seg", "--kv-dtype", "f32", "--max-seqs=64"}));
}

TEST(WorkerSupervisorTest, SplitCpusDividesEvenlyInOrder) {
  EXPECT_EQ(SplitCpus({0, 1, 2, 3, 4, 5, 6, 7}, 2, 0),
            (std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(SplitCpus({0, 1, 2, 3, 4}, 2, 0), (std::vector<std::vector<int>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(SplitCpus({0, 1, 2, 3}, 2, 1), (std::vector<std::vector<int>>{{0}, {1}}));
}

TEST(WorkerSupervisorTest, SplitCpusWrapsWhenWorkersOutnumberCpus) {
  EXPECT_EQ(SplitCpus({0, 1}, 3, 0), (std::vector<std::vector<int>>{{0}, {1}, {0}}));
  EXPECT_EQ(SplitCpus({0, 1}, 1, 8), (std::vector<std::vector<int>>{{0, 1}}));
}

class SupervisorScriptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tmp_.path();
    options_.runtime_dir = dir_;
    options_.ready_timeout = kWait;
    options_.stop_grace = kWait;
    options_.restart_backoff_initial = std::chrono::milliseconds(1);
    options_.restart_backoff_max = std::chrono::milliseconds(1);
  }
  // An executable /bin/sh script in the test directory; it becomes the worker binary.
  void Script(const std::string& body) {
    options_.worker_binary = dir_ + "/fake-worker.sh";
    std::ofstream(options_.worker_binary) << "#!/bin/sh\n" << body << "\n";
    ASSERT_EQ(chmod(options_.worker_binary.c_str(), 0700), 0);
  }
  std::unique_ptr<WorkerSupervisor> Create(int workers) {
    auto s = WorkerSupervisor::Create("builtin:tiny", "", workers, options_);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  // Ready once the script has written `file`.
  WorkerSupervisor::Probe FileProbe(std::string file) {
    return [file](size_t) {
      return std::filesystem::exists(file) ? shared::Status::Ok()
                                           : shared::Unavailable("no file yet");
    };
  }

  smallmind::testing::ScopedTempDir tmp_;
  std::string dir_;
  SupervisorOptions options_;
};

TEST_F(SupervisorScriptTest, MissingWorkerBinaryIsAClearError) {
  options_.worker_binary = dir_ + "/does-not-exist";
  auto s = WorkerSupervisor::Create("builtin:tiny", "", 1, options_);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("--worker-binary"), std::string::npos);
}

TEST_F(SupervisorScriptTest, NamesAWorkerThatExitsBeforeBecomingReady) {
  Script("exit 3");
  auto supervisor = Create(1);
  ASSERT_NE(supervisor, nullptr);
  const shared::Status s = supervisor->Start(FileProbe(dir_ + "/never"), nullptr);
  EXPECT_EQ(s.code(), shared::StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("worker 0"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("exited with code 3 before becoming ready"), std::string::npos)
      << s.message();
}

// --worker-flags reach every spawned worker, after the supervisor's own flags.
TEST_F(SupervisorScriptTest, EveryWorkerGetsTheExtraFlags) {
  Script("echo \"$@\" > " + dir_ + "/args-$$.tmp && mv " + dir_ + "/args-$$.tmp " + dir_ +
         "/args-$$\nexec sleep 60");
  options_.worker_flags = {"--kv-dtype", "f32", "--kv-memory-mb", "64"};
  auto supervisor = Create(2);
  ASSERT_NE(supervisor, nullptr);
  auto both = [this](size_t) {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      const std::string name = e.path().filename().string();
      n += name.starts_with("args-") && !name.ends_with(".tmp");
    }
    return n == 2 ? shared::Status::Ok() : shared::Unavailable("not yet");
  };
  ASSERT_TRUE(supervisor->Start(both, nullptr).ok());
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    const std::string name = e.path().filename().string();
    if (!name.starts_with("args-") || name.ends_with(".tmp")) continue;
    std::ifstream in(e.path());
    std::string line;
    std::getline(in, line);
    EXPECT_TRUE(line.ends_with("--kv-dtype f32 --kv-memory-mb 64")) << line;
    EXPECT_NE(line.find("--model builtin:tiny"), std::string::npos) << line;
  }
  supervisor->Stop();
}

TEST_F(SupervisorScriptTest, NamesAWorkerThatNeverBecomesReadyAndStopsIt) {
  Script("exec sleep 60");
  options_.ready_timeout = std::chrono::milliseconds(100);
  auto supervisor = Create(1);
  ASSERT_NE(supervisor, nullptr);
  const std::string socket_dir =
      std::filesystem::path(supervisor->targets()[0].substr(5)).parent_path();
  const shared::Status s = supervisor->Start(FileProbe(dir_ + "/never"), nullptr);
  EXPECT_NE(s.message().find("did not answer Stats within 100 ms"), std::string::npos)
      << s.message();
  EXPECT_EQ(supervisor->pid(0), 0);
  EXPECT_FALSE(std::filesystem::exists(socket_dir));
}

TEST_F(SupervisorScriptTest, PassesArgsAndAnUnblockedSignalMaskToTheWorker) {
  // The gateway blocks SIGTERM for sigwait; workers must not inherit that.
  sigset_t term, old;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, &old);
  // Builtins only, so that the mask read is the shell's own and not one held around a fork.
  Script(
      "while read -r line; do case \"$line\" in SigBlk*) echo \"$line\";; esac; done "
      "< /proc/self/status > " +
      dir_ + "/mask.tmp\necho \"$@\" >> " + dir_ + "/mask.tmp\nmv " + dir_ + "/mask.tmp " + dir_ +
      "/ready\nexec sleep 60");
  auto supervisor = Create(1);
  ASSERT_NE(supervisor, nullptr);
  const shared::Status s = supervisor->Start(FileProbe(dir_ + "/ready"), nullptr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::stringstream text;
  text << std::ifstream(dir_ + "/ready").rdbuf();
  EXPECT_NE(text.str().find("SigBlk:\t0000000000000000"), std::string::npos) << text.str();
  EXPECT_NE(
      text.str().find("--model builtin:tiny --listen unix:" + supervisor->targets()[0].substr(5)),
      std::string::npos)
      << text.str();
  supervisor->Stop();  // SIGTERM ends `sleep` well before the SIGKILL grace
  EXPECT_EQ(supervisor->pid(0), 0);
}

TEST_F(SupervisorScriptTest, RestartsAKilledWorkerAndTellsTheListener) {
  Script("exec sleep 60");
  auto supervisor = Create(2);
  ASSERT_NE(supervisor, nullptr);
  std::mutex mu;
  std::vector<size_t> exited;
  ASSERT_TRUE(supervisor
                  ->Start([](size_t) { return shared::Status::Ok(); },
                          [&](size_t i) {
                            std::lock_guard<std::mutex> lock(mu);
                            exited.push_back(i);
                          })
                  .ok());
  const pid_t first = supervisor->pid(1);
  ASSERT_GT(first, 0);
  ASSERT_EQ(kill(first, SIGKILL), 0);
  ASSERT_TRUE(supervisor->WaitForRestarts(1, kWait));
  EXPECT_NE(supervisor->pid(1), first);
  EXPECT_GT(supervisor->pid(1), 0);
  EXPECT_EQ(supervisor->restarts_total(), 1u);
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(exited, std::vector<size_t>{1});
  }
  supervisor->Stop();
  EXPECT_EQ(supervisor->pid(0), 0);
  EXPECT_EQ(supervisor->pid(1), 0);
}

TEST_F(SupervisorScriptTest, StopRemovesTheSocketDirectoryWithEverythingInIt) {
  // A worker that leaves more than its socket behind: a plain file beside it.
  Script("sock=${4#unix:}\ntouch \"$sock\" \"${sock%/*}/left-by-worker\" " + dir_ +
         "/ready\nexec sleep 60");
  auto supervisor = Create(1);
  ASSERT_NE(supervisor, nullptr);
  const std::filesystem::path socket_dir =
      std::filesystem::path(supervisor->targets()[0].substr(5)).parent_path();
  ASSERT_TRUE(supervisor->Start(FileProbe(dir_ + "/ready"), nullptr).ok());
  ASSERT_TRUE(std::filesystem::exists(socket_dir / "left-by-worker"));
  supervisor->Stop();
  EXPECT_FALSE(std::filesystem::exists(socket_dir));
}

TEST_F(SupervisorScriptTest, AnEmptyRuntimeDirMeansTmpdir) {
  Script("exit 0");
  options_.runtime_dir = "";
  const char* tmpdir = std::getenv("TMPDIR");
  const std::optional<std::string> saved =
      tmpdir != nullptr ? std::optional<std::string>(tmpdir) : std::nullopt;
  ASSERT_EQ(setenv("TMPDIR", dir_.c_str(), 1), 0);
  auto supervisor = Create(1);
  if (saved) {
    setenv("TMPDIR", saved->c_str(), 1);
  } else {
    unsetenv("TMPDIR");
  }
  ASSERT_NE(supervisor, nullptr);
  const std::string target = supervisor->targets()[0];
  EXPECT_EQ(target.rfind("unix:" + dir_ + "/smallmind-", 0), 0u) << target;
  const std::string socket_dir = std::filesystem::path(target.substr(5)).parent_path();
  ASSERT_TRUE(std::filesystem::is_directory(socket_dir));
  supervisor.reset();
  EXPECT_FALSE(std::filesystem::exists(socket_dir)) << "the socket directory outlived Stop()";
}

TEST_F(SupervisorScriptTest, RefusesARuntimeDirTooLongForUnixSocketPaths) {
  Script("exit 0");
  options_.runtime_dir = dir_ + "/" + std::string(100, 'd');
  auto s = WorkerSupervisor::Create("builtin:tiny", "", 1, options_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), shared::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("--runtime-dir"), std::string::npos) << s.status().message();
}

}  // namespace
}  // namespace smallmind::gateway
