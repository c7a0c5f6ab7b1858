// The multi-host topology on loopback: smallmind-worker processes started on their own on TCP
// (127.0.0.1-3, one port, as the pods of a Kubernetes headless Service), the gateway attached by a
// DNS name that resolves to them (an injected resolver: /etc/hosts is not the test's to edit; the
// system resolver is covered in worker_endpoints_test). A worker leaves and another joins, one is
// killed and restarted, and the gateway follows each time.
#include <signal.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "gateway/gateway.h"
#include "smallmind/v1/inference.grpc.pb.h"
#include "tests/testing/child_process.h"
#include "tests/testing/free_port.h"

namespace smallmind::gateway {
namespace {

using smallmind::testing::ChildProcess;

constexpr std::chrono::milliseconds kStartup{60000};
constexpr char kName[] = "workers.smallmind.test";

// A smallmind-worker serving builtin:tiny on `address`:`port`, its KV cache in process memory (a
// SIGKILL leaves nothing in /dev/shm). Null when it did not start serving.
std::unique_ptr<ChildProcess> StartWorker(const std::string& address, int port) {
  auto child = ChildProcess::Spawn(
      {"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&1",
       smallmind::testing::BinaryPath("smallmind-worker"), "--model", "builtin:tiny", "--listen",
       address + ":" + std::to_string(port), "--kv-segment", "none", "--threads", "1",
       "--kv-memory-mb", "16", "--exit-with-parent"});
  if (!child.ok() || !(*child)->WaitForLine("serving on", kStartup).ok()) return nullptr;
  return std::move(child).value();
}

// Polls `done` (bounded: 1000 tries, 20 ms apart) while the gateway's poll thread catches up.
bool Eventually(const std::function<bool()>& done) {
  for (int i = 0; i < 1000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

class AttachedWorkersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = smallmind::testing::FreePort();
    ASSERT_NE(port_, 0);
  }
  void TearDown() override {
    if (gateway_) gateway_->Shutdown();
    for (auto& [address, worker] : workers_) {
      if (worker) worker->Terminate(std::chrono::milliseconds(10000));
    }
  }

  void SetDns(std::vector<std::string> addresses) {
    std::lock_guard<std::mutex> lock(dns_mu_);
    dns_ = std::move(addresses);
  }
  void Start(const std::string& address) {
    workers_[address] = StartWorker(address, port_);
    ASSERT_NE(workers_[address], nullptr) << "worker on " << address;
  }
  std::string Target(const std::string& address) const {
    return address + ":" + std::to_string(port_);
  }
  void StartGateway() {
    GatewayConfig config;
    config.worker_endpoints = {std::string(kName) + ":" + std::to_string(port_)};
    config.listen_host = "127.0.0.1";
    config.port = 0;
    config.pool.poll_interval = std::chrono::milliseconds(50);
    config.pool.resolve_interval = std::chrono::milliseconds(100);
    config.pool.resolver =
        [this](const std::string& host) -> shared::Result<std::vector<std::string>> {
      std::lock_guard<std::mutex> lock(dns_mu_);
      return host == kName ? dns_ : std::vector<std::string>{};
    };
    gateway_ = std::make_unique<Gateway>(config);
    const shared::Status status = gateway_->Start();
    ASSERT_TRUE(status.ok()) << status.ToString();
    stub_ = smallmind::v1::Inference::NewStub(
        grpc::CreateChannel(gateway_->connect_address(), grpc::InsecureChannelCredentials()));
  }
  // Worker id -> target of the gateway's members.
  std::map<uint32_t, std::string> Members() {
    std::map<uint32_t, std::string> out;
    for (const auto& link : gateway_->pool().Links()) out[link->index()] = link->target();
    return out;
  }
  // The worker ids that served `n` short requests in a row (each must succeed).
  std::set<uint32_t> WorkersServing(int n) {
    std::set<uint32_t> ids;
    for (int i = 0; i < n; ++i) {
      smallmind::v1::GenerateRequest request;
      request.set_prompt("hello " + std::to_string(i));
      request.mutable_stopping()->set_max_new_tokens(3);
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
      auto reader = stub_->Generate(&context, request);
      smallmind::v1::GenerateResponse message, last;
      while (reader->Read(&message)) last = message;
      const grpc::Status status = reader->Finish();
      EXPECT_TRUE(status.ok()) << status.error_message();
      if (status.ok()) ids.insert(last.timings().worker_id());
    }
    return ids;
  }

  int port_ = 0;
  std::mutex dns_mu_;
  std::vector<std::string> dns_;  // guarded by dns_mu_
  std::map<std::string, std::unique_ptr<ChildProcess>> workers_;
  std::unique_ptr<Gateway> gateway_;
  std::unique_ptr<smallmind::v1::Inference::Stub> stub_;
};

TEST_F(AttachedWorkersTest, GatewayFollowsTheWorkersBehindADnsName) {
  Start("127.0.0.1");
  Start("127.0.0.2");
  SetDns({"127.0.0.1", "127.0.0.2"});
  ASSERT_NO_FATAL_FAILURE(StartGateway());
  ASSERT_TRUE(Eventually([&] { return gateway_->pool().HealthyCount() == 2; }));
  EXPECT_EQ(Members(),
            (std::map<uint32_t, std::string>{{0, Target("127.0.0.1")}, {1, Target("127.0.0.2")}}));
  EXPECT_EQ(WorkersServing(4), (std::set<uint32_t>{0, 1})) << "one name, two workers";

  // Scale: the pod at .2 goes, one at .3 comes; DNS follows, and so does the gateway.
  EXPECT_NE(workers_["127.0.0.2"]->Terminate(std::chrono::milliseconds(10000)), -1);
  Start("127.0.0.3");
  SetDns({"127.0.0.1", "127.0.0.3"});
  ASSERT_TRUE(Eventually([&] {
    return Members() == std::map<uint32_t, std::string>{{0, Target("127.0.0.1")},
                                                        {2, Target("127.0.0.3")}} &&
           gateway_->pool().HealthyCount() == 2;
  })) << "members now: "
      << Members().size();
  EXPECT_EQ(WorkersServing(4), (std::set<uint32_t>{0, 2}));

  // A worker killed and restarted at its address: health checks notice, the link reconnects, and
  // it serves again under its old id.
  workers_["127.0.0.1"]->Signal(SIGKILL);
  EXPECT_NE(workers_["127.0.0.1"]->Wait(std::chrono::milliseconds(10000)), -1);
  ASSERT_TRUE(Eventually([&] { return gateway_->pool().HealthyCount() == 1; }));
  EXPECT_EQ(WorkersServing(2), (std::set<uint32_t>{2})) << "only the live worker is routed to";
  Start("127.0.0.1");
  ASSERT_TRUE(Eventually([&] { return gateway_->pool().HealthyCount() == 2; }));
  EXPECT_EQ(Members().at(0), Target("127.0.0.1"));
  EXPECT_EQ(WorkersServing(4), (std::set<uint32_t>{0, 2}));
}

}  // namespace
}  // namespace smallmind::gateway
