// The KV pool in shared memory with real processes: a worker's segment exists with mode 0600 while
// it runs and is gone after a clean exit; a worker killed with SIGKILL leaves it, and a successor
// started with the same model and segment name re-attaches it and serves a cached prefix as a
// hit, while a successor with another model discards it with a log line saying why; a gateway's
// workers are restarted warm, and a gateway stopped cleanly leaves nothing in /dev/shm.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "shared/shm_segment.h"
#include "shared/worker_stat_table.h"
#include "smallmind/v1/worker.grpc.pb.h"
#include "tests/testing/child_process.h"
#include "tests/testing/rpc/gateway_fixture.h"
#include "tests/testing/scoped_temp_dir.h"

namespace smallmind {
namespace {

using shared::ShmSegment;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr milliseconds kStartup{60000};  // bounds against hangs, not speed assertions

std::string UniqueSegmentName() {
  static std::atomic<int> counter{0};
  return "smallmind-test-kv-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

// 100 prompt tokens: 6 full 16-token blocks can be reused (the last token is always computed).
std::vector<uint32_t> Prompt(uint32_t salt) {
  std::vector<uint32_t> ids = {1};
  for (uint32_t i = 1; i < 100; ++i) ids.push_back(3 + (i * 7 + salt) % 250);
  return ids;
}
constexpr int kReusableTokens = 96;

// A smallmind-worker on its own Unix socket, its stderr (the log) merged into the piped stdout.
class WorkerProcess {
 public:
  // `segment` "": a standalone worker's own name, its name file under `dir` (--runtime-dir).
  static std::unique_ptr<WorkerProcess> Start(const std::string& model, const std::string& segment,
                                              const std::string& dir) {
    auto w = std::unique_ptr<WorkerProcess>(new WorkerProcess());
    w->target_ = "unix:" + dir + "/worker.sock";
    std::vector<std::string> argv = {"/bin/sh",
                                     "-c",
                                     "exec \"$0\" \"$@\" 2>&1",
                                     testing::BinaryPath("smallmind-worker"),
                                     "--model",
                                     model,
                                     "--listen",
                                     w->target_,
                                     "--threads",
                                     "1",
                                     "--exit-with-parent"};
    if (segment.empty()) {
      argv.insert(argv.end(), {"--runtime-dir", dir});
    } else {
      argv.insert(argv.end(), {"--kv-segment", segment});
    }
    auto child = testing::ChildProcess::Spawn(argv);
    EXPECT_TRUE(child.ok()) << child.status().ToString();
    if (!child.ok()) return nullptr;
    w->process_ = std::move(child).value();
    return w;
  }

  // Reads the log until a line containing `needle` (bounded); "" when none came.
  std::string WaitForLog(const std::string& needle) {
    auto line = process_->WaitForLine(needle, kStartup);
    return line.ok() ? *line : "";
  }
  bool WaitServing() { return !WaitForLog("serving on").empty(); }

  // Runs one request to the end; returns the final message's usage.cached_prompt_tokens, or -1
  // when the stream failed.
  int Generate(const std::vector<uint32_t>& prompt) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + seconds(60));
    v1::SubmitRequest req;
    for (uint32_t id : prompt) req.mutable_request()->mutable_prompt_token_ids()->add_ids(id);
    req.mutable_request()->mutable_sampling()->set_temperature(0);
    req.mutable_request()->mutable_stopping()->set_max_new_tokens(2);
    auto reader = stub()->Submit(&ctx, req);
    v1::SubmitResponse msg;
    int cached = -1;
    while (reader->Read(&msg)) {
      if (msg.response().has_usage()) cached = msg.response().usage().cached_prompt_tokens();
    }
    const grpc::Status s = reader->Finish();
    EXPECT_TRUE(s.ok()) << s.error_message();
    return s.ok() ? cached : -1;
  }

  v1::WorkerStats Stats() {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + seconds(10));
    v1::WorkerStats stats;
    const grpc::Status s = stub()->Stats(&ctx, v1::StatsRequest(), &stats);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return stats;
  }

  // Sends `sig` and waits (bounded) for the exit; returns the raw wait status.
  int Stop(int sig) {
    stub_.reset();
    process_->Signal(sig);
    return process_->Wait(kStartup);
  }

 private:
  v1::Worker::Stub* stub() {
    if (!stub_) {
      stub_ = v1::Worker::NewStub(grpc::CreateChannel(target_, grpc::InsecureChannelCredentials()));
    }
    return stub_.get();
  }

  std::string target_;
  std::unique_ptr<testing::ChildProcess> process_;
  std::unique_ptr<v1::Worker::Stub> stub_;
};

// Removes the segment name at scope end whatever happened.
struct SegmentGuard {
  std::string name = UniqueSegmentName();
  ~SegmentGuard() { ShmSegment::Remove(name); }
};

mode_t ModeOf(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 0777) : 0;
}

TEST(KvWarmRestartTest, TheSegmentIs0600WhileTheWorkerRunsAndGoneAfterACleanExit) {
  testing::ScopedTempDir dir("kvshm");
  SegmentGuard seg;
  auto worker = WorkerProcess::Start("builtin:tiny", seg.name, dir.path());
  ASSERT_TRUE(worker && worker->WaitServing());
  EXPECT_EQ(ModeOf(ShmSegment::PathOf(seg.name)), 0600u);
  EXPECT_EQ(worker->Generate(Prompt(1)), 0);
  const int status = worker->Stop(SIGTERM);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_FALSE(ShmSegment::Exists(seg.name)) << "a clean exit removes the segment";
}

TEST(KvWarmRestartTest, ASigkilledWorkersSuccessorReattachesAndServesTheCachedPrefixAsAHit) {
  testing::ScopedTempDir dir("kvwarm");
  SegmentGuard seg;
  {
    auto first = WorkerProcess::Start("builtin:tiny", seg.name, dir.path());
    ASSERT_TRUE(first && first->WaitServing());
    EXPECT_EQ(first->Generate(Prompt(2)), 0);
    EXPECT_EQ(first->Generate(Prompt(2)), kReusableTokens) << "a hit within one worker's life";
    const int status = first->Stop(SIGKILL);
    ASSERT_TRUE(WIFSIGNALED(status)) << status;
  }
  ASSERT_TRUE(ShmSegment::Exists(seg.name)) << "a crash leaves the segment for the successor";
  auto second = WorkerProcess::Start("builtin:tiny", seg.name, dir.path());
  ASSERT_TRUE(second);
  const std::string line = second->WaitForLog("re-attached");
  EXPECT_NE(line.find("kept"), std::string::npos) << line;
  ASSERT_TRUE(second->WaitServing());
  EXPECT_EQ(second->Generate(Prompt(2)), kReusableTokens) << "the first request after a restart";
  const v1::WorkerStats stats = second->Stats();
  EXPECT_EQ(shared::ReadWorkerStat(stats.values(), shared::WorkerStat::kPrefixCacheLookups), 1u);
  EXPECT_EQ(shared::ReadWorkerStat(stats.values(), shared::WorkerStat::kPrefixCacheHits), 1u);
  EXPECT_EQ(shared::ReadWorkerStat(stats.values(), shared::WorkerStat::kPrefixCacheHitTokens),
            static_cast<uint64_t>(kReusableTokens));
  EXPECT_EQ(second->Generate(Prompt(3)), 0) << "another prompt is no hit";
  EXPECT_EQ(ModeOf(ShmSegment::PathOf(seg.name)), 0600u);
  second->Stop(SIGTERM);
  EXPECT_FALSE(ShmSegment::Exists(seg.name));
}

TEST(KvWarmRestartTest, ASuccessorWithAnotherModelDiscardsTheSegmentAndSaysWhy) {
  testing::ScopedTempDir dir("kvother");
  SegmentGuard seg;
  {
    auto first = WorkerProcess::Start("builtin:tiny", seg.name, dir.path());
    ASSERT_TRUE(first && first->WaitServing());
    EXPECT_EQ(first->Generate(Prompt(4)), 0);
    first->Stop(SIGKILL);
  }
  // The same shapes as builtin:tiny with other weights: only the fingerprint tells them apart.
  const std::string other = dir.File("other.gguf");
  auto gen = testing::ChildProcess::Spawn(
      {testing::BinaryPath("smallmind-modelgen"), "--preset", "tiny", "--seed", "99", "-o", other});
  ASSERT_TRUE(gen.ok());
  ASSERT_EQ((*gen)->Wait(kStartup), 0);
  auto second = WorkerProcess::Start(other, seg.name, dir.path());
  ASSERT_TRUE(second);
  const std::string line = second->WaitForLog("discarding KV segment");
  EXPECT_NE(line.find("another model"), std::string::npos) << line;
  ASSERT_TRUE(second->WaitServing());
  EXPECT_EQ(second->Generate(Prompt(4)), 0);
  second->Stop(SIGTERM);
  EXPECT_FALSE(ShmSegment::Exists(seg.name));
}

// /dev/shm entries of the gateway with process id `pid`: smallmind-<pid>-XXXXXX-w<k>.
std::vector<std::string> GatewaySegments(int pid) {
  std::vector<std::string> out;
  const std::string prefix = "smallmind-" + std::to_string(pid) + "-";
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm")) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0) out.push_back(name);
  }
  return out;
}

// Stats of worker `index` of the gateway whose runtime directory is `runtime_dir`, over a new
// channel (a cached one would sit out gRPC's reconnect backoff after its worker died).
std::optional<v1::WorkerStats> FreshWorkerStats(const std::string& runtime_dir, size_t index) {
  for (const auto& e : std::filesystem::directory_iterator(runtime_dir)) {
    const std::string sock = (e.path() / ("worker-" + std::to_string(index) + ".sock")).string();
    if (!std::filesystem::exists(sock)) continue;
    auto stub = v1::Worker::NewStub(
        grpc::CreateChannel("unix:" + sock, grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + seconds(2));
    v1::WorkerStats stats;
    if (stub->Stats(&ctx, v1::StatsRequest(), &stats).ok()) return stats;
  }
  return std::nullopt;
}

TEST(KvWarmRestartTest, AGatewayRestartsAKilledWorkerWarmAndLeavesNothingInDevShm) {
  testing::GatewayOptions options;
  options.workers = 2;
  auto gateway = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  const int pid = (*gateway)->process().pid();
  const std::vector<std::string> segments = GatewaySegments(pid);
  ASSERT_EQ(segments.size(), 2u);
  for (const std::string& s : segments) EXPECT_EQ(ModeOf("/dev/shm/" + s), 0600u) << s;

  v1::GenerateRequest req;
  for (uint32_t id : Prompt(5)) req.mutable_prompt_token_ids()->add_ids(id);
  req.mutable_sampling()->set_temperature(0);
  req.mutable_stopping()->set_max_new_tokens(2);
  // The worker that serves the first request caches the prefix.
  const testing::GenerateOutcome first = testing::RunGenerate((*gateway)->stub(), req);
  ASSERT_TRUE(first.status.ok()) << first.status.error_message();
  EXPECT_EQ(first.last()->usage().cached_prompt_tokens(), 0u);
  const uint32_t w = first.last()->timings().worker_id();
  // Kill it; the gateway restarts it with the same arguments (and segment name).
  const std::string runtime_dir = (*gateway)->runtime_dir();
  const auto before = FreshWorkerStats(runtime_dir, w);
  ASSERT_TRUE(before.has_value());
  ASSERT_EQ(::kill(static_cast<pid_t>(before->pid()), SIGKILL), 0);
  bool restarted = false;
  for (int i = 0; i < 600 && !restarted; ++i) {  // bounded poll for the successor
    const auto now = FreshWorkerStats(runtime_dir, w);
    restarted = now.has_value() && now->pid() != before->pid();
    if (!restarted) std::this_thread::sleep_for(milliseconds(100));
  }
  ASSERT_TRUE(restarted);
  // ... and routes to it again once it answers the gateway's probe.
  bool routed = false;
  for (int i = 0; i < 600 && !routed; ++i) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + seconds(5));
    v1::ModelInfo info;
    routed = (*gateway)->stub().GetModelInfo(&ctx, v1::GetModelInfoRequest(), &info).ok() &&
             info.workers() == 2;
    if (!routed) std::this_thread::sleep_for(milliseconds(100));
  }
  ASSERT_TRUE(routed);
  // The first request the restarted worker serves is a hit.
  int served_by_w = 0;
  for (int i = 0; i < 20 && served_by_w == 0; ++i) {
    const testing::GenerateOutcome out = testing::RunGenerate((*gateway)->stub(), req);
    ASSERT_TRUE(out.status.ok()) << out.status.error_message();
    if (out.last()->timings().worker_id() != w) continue;
    ++served_by_w;
    EXPECT_EQ(out.last()->usage().cached_prompt_tokens(), kReusableTokens);
  }
  EXPECT_EQ(served_by_w, 1);
  const auto after = FreshWorkerStats(runtime_dir, w);
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(shared::ReadWorkerStat(after->values(), shared::WorkerStat::kPrefixCacheHits), 1u);
  const shared::Status stopped = (*gateway)->Stop();
  EXPECT_TRUE(stopped.ok()) << stopped.ToString();
  EXPECT_TRUE(GatewaySegments(pid).empty()) << "a clean shutdown leaves nothing in /dev/shm";
}

// Issue 40: a standalone worker (no --kv-segment) names its segment with a random part, finds it
// again after a crash through its owner-only name file, and a clean exit removes both.
TEST(KvWarmRestartTest, AStandaloneWorkersRandomSegmentNameSurvivesACrashAndGoesWithACleanExit) {
  testing::ScopedTempDir dir("kvname");
  const std::string name_dir = dir.path() + "/smallmind-kv-" + std::to_string(geteuid());
  // The one name file there, and the base name its file name carries (<base>.name).
  std::string name_file, base;
  auto read_name = [&] {
    for (const auto& entry : std::filesystem::directory_iterator(name_dir)) {
      name_file = entry.path().string();
      base = entry.path().stem().string();
    }
    std::ifstream in(name_file);
    std::string name;
    std::getline(in, name);
    return name;
  };
  std::string name;
  {
    auto first = WorkerProcess::Start("builtin:tiny", "", dir.path());
    ASSERT_TRUE(first && first->WaitServing());
    name = read_name();
    EXPECT_TRUE(base.starts_with("smallmind-kv-unix-")) << base;
    ASSERT_EQ(name.size(), base.size() + 17) << name << " (" << name_file << ")";
    EXPECT_EQ(name.substr(0, base.size() + 1), base + "-");
    EXPECT_TRUE(ShmSegment::Exists(name));
    EXPECT_EQ(ModeOf(name_dir), 0700u);
    EXPECT_EQ(ModeOf(name_file), 0600u);
    EXPECT_EQ(first->Generate(Prompt(4)), 0);
    ASSERT_TRUE(WIFSIGNALED(first->Stop(SIGKILL)));
  }
  ASSERT_TRUE(ShmSegment::Exists(name)) << "a crash leaves the segment for the successor";
  auto second = WorkerProcess::Start("builtin:tiny", "", dir.path());
  ASSERT_TRUE(second);
  EXPECT_NE(second->WaitForLog("re-attached").find(name), std::string::npos);
  ASSERT_TRUE(second->WaitServing());
  EXPECT_EQ(second->Generate(Prompt(4)), kReusableTokens) << "its own segment, found again";
  EXPECT_EQ(read_name(), name);
  const int status = second->Stop(SIGTERM);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_FALSE(ShmSegment::Exists(name));
  EXPECT_FALSE(std::filesystem::exists(name_file)) << "a clean exit removes the name file";
  EXPECT_FALSE(std::filesystem::exists(name_dir)) << "and the directory it emptied";
}

}  // namespace
}  // namespace smallmind
