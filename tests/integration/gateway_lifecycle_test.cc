// The gateway as a service manager sees it: a taken port refuses to start before any worker is
// spawned, SIGTERM drains (a repeated SIGTERM changes nothing), --drain-seconds bounds the drain,
// SIGINT twice cancels the open streams, and a gateway killed with SIGKILL takes its workers with
// it and leaves nothing the next start does not reclaim.
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/testing/rpc/gateway_fixture.h"
#include "tests/testing/scoped_temp_dir.h"
#include "tests/testing/test_models.h"

namespace smallmind {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kLongStream = 8000;

std::vector<std::filesystem::path> Entries(const std::string& dir) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path());
  return out;
}

int PortOf(const std::string& address) { return std::stoi(address.substr(address.rfind(':') + 1)); }

v1::GenerateRequest LongRequest() {
  v1::GenerateRequest request;
  request.set_prompt("drain me");
  request.mutable_sampling()->set_temperature(0);
  request.mutable_stopping()->set_max_new_tokens(kLongStream);
  request.mutable_stopping()->set_ignore_eos(true);
  return request;
}

// A stream opened on the gateway, read from the test thread.
struct OpenStream {
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReader<v1::GenerateResponse>> reader;
  size_t tokens = 0;
  v1::FinishReason finish = v1::FINISH_REASON_UNSPECIFIED;

  bool ReadFirst(v1::Inference::Stub& stub) {
    context.set_deadline(std::chrono::system_clock::now() + seconds(300));
    reader = stub.Generate(&context, LongRequest());
    v1::GenerateResponse message;
    if (!reader->Read(&message)) return false;
    tokens += static_cast<size_t>(message.token_ids_size());
    return true;
  }
  grpc::Status ReadToEnd() {
    v1::GenerateResponse message;
    for (int i = 0; i <= kLongStream && reader->Read(&message); ++i) {
      tokens += static_cast<size_t>(message.token_ids_size());
      if (message.finish_reason() != v1::FINISH_REASON_UNSPECIFIED)
        finish = message.finish_reason();
    }
    return reader->Finish();
  }
};

class GatewayLifecycleTest : public ::testing::Test {
 protected:
  // A gateway with one worker serving the long-context model, with `extra` flags.
  std::unique_ptr<testing::GatewayFixture> StartLong(std::vector<std::string> extra = {}) {
    testing::GatewayOptions options;
    options.model = testing::LongContextTinyModel(models_);
    EXPECT_FALSE(options.model.empty()) << "smallmind-modelgen failed";
    options.extra_args = std::move(extra);
    auto started = testing::GatewayFixture::Start(options);
    EXPECT_TRUE(started.ok()) << started.status().ToString();
    return started.ok() ? std::move(started).value() : nullptr;
  }

  const testing::ScopedTempDir models_{"models"};  // outlives the gateways that map the file
};

TEST_F(GatewayLifecycleTest, ABusyPortRefusesToStartBeforeSpawningAWorker) {
  auto first = testing::GatewayFixture::Start({});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const int port = PortOf((*first)->address());
  const testing::ScopedTempDir runtime("second");
  auto second = testing::ChildProcess::Spawn({testing::BinaryPath("smallmind-gateway"), "--port",
                                              std::to_string(port), "--listen-host", "127.0.0.1",
                                              "--workers", "1", "--runtime-dir", runtime.path()});
  ASSERT_TRUE(second.ok());
  const int status = (*second)->Wait(milliseconds(60000));
  ASSERT_NE(status, -1) << "the second gateway should exit at once";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << "wait status " << status;
  EXPECT_TRUE(Entries(runtime.path()).empty())
      << "no worker socket directory: no worker was spawned";
  // The first gateway serves on, alone.
  grpc::ClientContext context;
  v1::ModelInfo info;
  EXPECT_TRUE((*first)->stub().GetModelInfo(&context, {}, &info).ok());
}

TEST_F(GatewayLifecycleTest, ABusyHttpPortRefusesToStartBeforeSpawningAWorker) {
  testing::GatewayOptions options;
  options.http = true;
  auto first = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const std::string http = (*first)->http_address();  // http://127.0.0.1:PORT
  const testing::ScopedTempDir runtime("second");
  auto second = testing::ChildProcess::Spawn({testing::BinaryPath("smallmind-gateway"), "--port",
                                              "0", "--listen-host", "127.0.0.1", "--http-port",
                                              std::to_string(PortOf(http)), "--workers", "1",
                                              "--runtime-dir", runtime.path()});
  ASSERT_TRUE(second.ok());
  const int status = (*second)->Wait(milliseconds(60000));
  ASSERT_NE(status, -1) << "the second gateway should exit at once";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << "wait status " << status;
  EXPECT_TRUE(Entries(runtime.path()).empty())
      << "no worker socket directory: no worker was spawned";
}

TEST_F(GatewayLifecycleTest, TheStartLineNamesTheAddressBoundAndWhereToConnect) {
  const testing::ScopedTempDir runtime("wildcard");
  auto gateway = testing::ChildProcess::Spawn(
      {testing::BinaryPath("smallmind-gateway"), "--port", "0", "--listen-host", "0.0.0.0",
       "--model", "builtin:tiny", "--workers", "1", "--runtime-dir", runtime.path()});
  ASSERT_TRUE(gateway.ok());
  auto line = (*gateway)->WaitForLine("listening on", milliseconds(60000));
  ASSERT_TRUE(line.ok()) << line.status().ToString();
  const std::string port = std::to_string(PortOf(*line));
  EXPECT_NE(line->find("listening on 0.0.0.0:" + port + ","), std::string::npos) << *line;
  EXPECT_TRUE(line->ends_with("connect to 127.0.0.1:" + port)) << *line;
  EXPECT_NE((*gateway)->Terminate(milliseconds(30000)), -1);
}

TEST_F(GatewayLifecycleTest, TheListeningPortCannotBeSharedThroughSoReuseport) {
  auto gateway = testing::GatewayFixture::Start({});
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(PortOf((*gateway)->address())));
  const int rc = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  const int error = errno;
  ::close(fd);
  EXPECT_EQ(rc, -1) << "gRPC's default SO_REUSEPORT would let a second server share the port";
  EXPECT_EQ(error, EADDRINUSE);
}

TEST_F(GatewayLifecycleTest, SigtermDrainsAnOpenStreamAndASecondSigtermDoesNotAbortIt) {
  auto gateway = StartLong({"--drain-seconds", "300"});
  ASSERT_NE(gateway, nullptr);
  OpenStream stream;
  ASSERT_TRUE(stream.ReadFirst(gateway->stub()));
  gateway->process().Signal(SIGTERM);
  ASSERT_TRUE(gateway->process().WaitForLine("draining", milliseconds(60000)).ok());
  gateway->process().Signal(SIGTERM);  // as `make run` + `kill -TERM -PGID` delivers it twice
  // New calls are refused once the drain has begun (bounded: the first refusal ends the loop).
  bool refused = false;
  for (int attempt = 0; attempt < 200 && !refused; ++attempt) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(5));
    v1::ModelInfo info;
    refused = !gateway->stub().GetModelInfo(&context, {}, &info).ok();
    if (!refused) std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_TRUE(refused) << "a draining gateway takes no new calls";
  const grpc::Status status = stream.ReadToEnd();
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(stream.tokens, static_cast<size_t>(kLongStream)) << "the stream ran to its end";
  EXPECT_EQ(stream.finish, v1::LENGTH);
  const int wait_status = gateway->process().Wait(milliseconds(60000));
  EXPECT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0)
      << "wait status " << wait_status;
  EXPECT_TRUE(gateway->Stop().ok()) << "exit 0 and the socket directory removed";
}

TEST_F(GatewayLifecycleTest, DrainSecondsZeroCancelsTheOpenStreamsAtOnce) {
  auto gateway = StartLong({"--drain-seconds", "0"});
  ASSERT_NE(gateway, nullptr);
  OpenStream stream;
  ASSERT_TRUE(stream.ReadFirst(gateway->stub()));
  gateway->process().Signal(SIGTERM);
  const grpc::Status status = stream.ReadToEnd();
  EXPECT_FALSE(status.ok());
  EXPECT_LT(stream.tokens, static_cast<size_t>(kLongStream));
  const shared::Status stopped = gateway->Stop();
  EXPECT_TRUE(stopped.ok()) << stopped.ToString();
}

TEST_F(GatewayLifecycleTest, SigintTwiceCancelsTheOpenStreamsAndStillStopsTheWorkers) {
  auto gateway = StartLong({"--drain-seconds", "300"});
  ASSERT_NE(gateway, nullptr);
  OpenStream stream;
  ASSERT_TRUE(stream.ReadFirst(gateway->stub()));
  gateway->process().Signal(SIGINT);
  ASSERT_TRUE(gateway->process().WaitForLine("draining", milliseconds(60000)).ok());
  gateway->process().Signal(SIGINT);
  const grpc::Status status = stream.ReadToEnd();
  EXPECT_FALSE(status.ok());
  EXPECT_LT(stream.tokens, static_cast<size_t>(kLongStream));
  const int wait_status = gateway->process().Wait(milliseconds(60000));
  EXPECT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 130)
      << "a forced stop says so; wait status " << wait_status;
  EXPECT_TRUE(Entries(gateway->runtime_dir()).empty()) << "workers stopped, sockets removed";
  gateway->Stop();  // reports the exit code 130, checked above
}

// Pids of the processes whose parent is `parent` (from /proc).
std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const size_t paren = line.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream rest(line.substr(paren + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) out.push_back(std::stoi(name));
  }
  return out;
}

// True when `pid` is gone or a zombie (exited, not yet reaped by whoever adopted it).
bool Exited(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

TEST_F(GatewayLifecycleTest, AKilledGatewaysWorkersExitAndTheNextStartReclaimsItsSockets) {
  const testing::ScopedTempDir runtime("shared-rt");
  testing::GatewayOptions options;
  options.workers = 2;
  options.extra_args = {"--runtime-dir", runtime.path()};
  auto killed = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(killed.ok()) << killed.status().ToString();
  const std::vector<pid_t> workers = ChildrenOf((*killed)->process().pid());
  ASSERT_EQ(workers.size(), 2u);
  ASSERT_EQ(Entries(runtime.path()).size(), 1u);
  (*killed)->process().Signal(SIGKILL);
  EXPECT_FALSE((*killed)->Stop().ok()) << "the fixture sees the unclean exit";
  for (pid_t worker : workers) {
    int polls = 0;
    while (!Exited(worker) && polls++ < 1200) std::this_thread::sleep_for(milliseconds(50));
    EXPECT_TRUE(Exited(worker)) << "worker " << worker << " outlived its gateway";
  }
  const std::vector<std::filesystem::path> left = Entries(runtime.path());
  ASSERT_EQ(left.size(), 1u) << "a SIGKILL leaves the socket directory behind";

  auto next = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  const std::vector<std::filesystem::path> now = Entries(runtime.path());
  ASSERT_EQ(now.size(), 1u) << "the stale directory was reclaimed";
  EXPECT_NE(now[0], left[0]);
  const shared::Status stopped = (*next)->Stop();
  EXPECT_TRUE(stopped.ok()) << stopped.ToString();
  EXPECT_TRUE(Entries(runtime.path()).empty());
}

TEST_F(GatewayLifecycleTest, KvSegmentsOfWorkersKilledWithTheirGatewayAreReclaimedByTheNextStart) {
  const testing::ScopedTempDir runtime("shared-rt");
  testing::GatewayOptions options;
  options.extra_args = {"--runtime-dir", runtime.path()};
  auto killed = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(killed.ok()) << killed.status().ToString();
  testing::ChildProcess& process = (*killed)->process();
  const std::vector<pid_t> workers = ChildrenOf(process.pid());
  ASSERT_EQ(workers.size(), 1u);
  const std::string instance = Entries(runtime.path()).at(0).filename().string();
  const std::filesystem::path segment = "/dev/shm/" + instance + "-w0";
  ASSERT_TRUE(std::filesystem::exists(segment)) << "the worker's KV pool lives in " << segment;
  // Nobody gets to clean up: the gateway is stopped first so it cannot restart the worker.
  process.Signal(SIGSTOP);
  ::kill(workers[0], SIGKILL);
  process.Signal(SIGKILL);
  EXPECT_FALSE((*killed)->Stop().ok());
  for (int polls = 0; !Exited(workers[0]) && polls < 1200; ++polls) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  ASSERT_TRUE(std::filesystem::exists(segment)) << "a SIGKILLed worker leaves its segment";

  auto next = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(segment)) << "the next start reclaims it";
  EXPECT_FALSE(std::filesystem::exists(runtime.path() + "/" + instance));
  const shared::Status stopped = (*next)->Stop();
  EXPECT_TRUE(stopped.ok()) << stopped.ToString();
}

}  // namespace
}  // namespace smallmind
