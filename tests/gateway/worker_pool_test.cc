// WorkerPool membership with DNS names: a name with several addresses is several workers, and a
// re-resolution adds and removes them with ids that stay with their address. The workers are
// small gRPC servers on loopback addresses 127.0.0.1-3 sharing one port, as the pods behind a
// Kubernetes headless Service do; the names come from an injected resolver.
#include "gateway/workers/worker_pool.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "smallmind/v1/worker.grpc.pb.h"

namespace smallmind::gateway {
namespace {

constexpr std::chrono::milliseconds kWait{10000};
constexpr char kName[] = "workers.smallmind.test";

// Answers Stats and GetModelInfo on `address`:`port` (port 0: any free one).
class StubWorker final : public smallmind::v1::Worker::CallbackService {
 public:
  StubWorker(const std::string& address, int port) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort(address + ":" + std::to_string(port),
                             grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
  }
  ~StubWorker() override {
    if (server_) server_->Shutdown(std::chrono::system_clock::now());
  }
  int port() const { return server_ ? port_ : 0; }

  grpc::ServerUnaryReactor* Stats(grpc::CallbackServerContext* context,
                                  const smallmind::v1::StatsRequest*,
                                  smallmind::v1::WorkerStats*) override {
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
  grpc::ServerUnaryReactor* GetModelInfo(grpc::CallbackServerContext* context,
                                         const smallmind::v1::GetModelInfoRequest*,
                                         smallmind::v1::ModelInfo* info) override {
    info->set_vocab_size(100);
    info->set_context_length(64);
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

 private:
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

// A DNS of one name whose answer the test changes; counts lookups so a test can wait for the
// poll thread's next ones.
class FakeDns {
 public:
  void Set(shared::Result<std::vector<std::string>> answer) {
    std::lock_guard<std::mutex> lock(mu_);
    answer_ = std::move(answer);
  }
  HostResolver resolver() {
    return [this](const std::string& host) -> shared::Result<std::vector<std::string>> {
      std::lock_guard<std::mutex> lock(mu_);
      ++lookups_;
      changed_.notify_all();
      if (host != kName) return std::vector<std::string>{};
      return answer_;
    };
  }
  int lookups() {
    std::lock_guard<std::mutex> lock(mu_);
    return lookups_;
  }
  bool WaitForLookups(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, kWait, [&] { return lookups_ >= n; });
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  shared::Result<std::vector<std::string>> answer_ = std::vector<std::string>{};
  int lookups_ = 0;
};

// worker id -> target of the pool's current members.
std::map<uint32_t, std::string> Members(const WorkerPool& pool) {
  std::map<uint32_t, std::string> out;
  for (const auto& link : pool.Links()) out[link->index()] = link->target();
  return out;
}

class WorkerPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    workers_.push_back(std::make_unique<StubWorker>("127.0.0.1", 0));
    port_ = workers_[0]->port();
    ASSERT_NE(port_, 0);
    for (const char* address : {"127.0.0.2", "127.0.0.3"}) {
      workers_.push_back(std::make_unique<StubWorker>(address, port_));
      ASSERT_EQ(workers_.back()->port(), port_) << address << " cannot listen on the same port";
    }
  }
  std::string Target(int host) const {
    return "127.0.0." + std::to_string(host) + ":" + std::to_string(port_);
  }
  std::unique_ptr<WorkerPool> MakePool(std::chrono::milliseconds resolve_interval = kWait * 100) {
    WorkerPoolOptions options;
    options.poll_interval = std::chrono::milliseconds(20);
    options.resolve_interval = resolve_interval;
    options.resolver = dns_.resolver();
    return std::make_unique<WorkerPool>(
        std::vector<std::string>{std::string(kName) + ":" + std::to_string(port_)}, options);
  }

  std::vector<std::unique_ptr<StubWorker>> workers_;  // at 127.0.0.1, .2, .3
  int port_ = 0;
  FakeDns dns_;
};

TEST_F(WorkerPoolTest, NameWithSeveralAddressesIsOneWorkerPerAddress) {
  dns_.Set(std::vector<std::string>{"127.0.0.1", "127.0.0.2"});
  auto pool = MakePool();
  EXPECT_EQ(Members(*pool), (std::map<uint32_t, std::string>{{0, Target(1)}, {1, Target(2)}}));
  pool->PollOnce();
  EXPECT_EQ(pool->HealthyCount(), 2u);
  std::set<uint32_t> picked;
  for (int i = 0; i < 4; ++i) {
    auto link = pool->Pick();
    ASSERT_NE(link, nullptr);
    picked.insert(link->index());
    link->EndRequest();
  }
  EXPECT_EQ(picked, (std::set<uint32_t>{0, 1})) << "idle workers take turns";
}

TEST_F(WorkerPoolTest, RefreshFollowsScalingAndIdsStayWithTheirAddress) {
  dns_.Set(std::vector<std::string>{"127.0.0.1", "127.0.0.2"});
  auto pool = MakePool();
  const auto first = pool->link(0);
  dns_.Set(std::vector<std::string>{"127.0.0.1", "127.0.0.3"});  // pod .2 gone, .3 new
  pool->Refresh();
  EXPECT_EQ(Members(*pool), (std::map<uint32_t, std::string>{{0, Target(1)}, {2, Target(3)}}));
  EXPECT_EQ(pool->link(0), first) << "a worker that stays keeps its link and connection";
  pool->PollOnce();
  EXPECT_EQ(pool->HealthyCount(), 2u) << "the new worker answers its first poll";
  for (int i = 0; i < 4; ++i) {
    auto link = pool->Pick();
    ASSERT_NE(link, nullptr);
    EXPECT_NE(link->index(), 1u) << "the worker that left is not routed to";
    link->EndRequest();
  }
  dns_.Set(std::vector<std::string>{"127.0.0.1", "127.0.0.2", "127.0.0.3"});
  pool->Refresh();
  EXPECT_EQ(Members(*pool),
            (std::map<uint32_t, std::string>{{0, Target(1)}, {1, Target(2)}, {2, Target(3)}}))
      << "an address that comes back gets its old id";
}

TEST_F(WorkerPoolTest, FailedLookupKeepsTheWorkersAndAnEmptyAnswerRemovesThem) {
  dns_.Set(std::vector<std::string>{"127.0.0.1", "127.0.0.2"});
  auto pool = MakePool();
  const auto before = Members(*pool);
  dns_.Set(shared::Unavailable("Temporary failure in name resolution"));
  pool->Refresh();
  EXPECT_EQ(Members(*pool), before);
  dns_.Set(std::vector<std::string>{});
  pool->Refresh();
  EXPECT_EQ(pool->size(), 0u);
  EXPECT_EQ(pool->Pick(), nullptr);
}

TEST_F(WorkerPoolTest, WorkerThatLeavesKeepsItsLinkUntilItsRequestEnds) {
  dns_.Set(std::vector<std::string>{"127.0.0.2"});
  auto pool = MakePool();
  pool->PollOnce();
  std::shared_ptr<WorkerClient> held = pool->Pick();
  ASSERT_NE(held, nullptr);
  std::weak_ptr<WorkerClient> watch = held;
  dns_.Set(std::vector<std::string>{"127.0.0.3"});
  pool->Refresh();
  EXPECT_EQ(Members(*pool), (std::map<uint32_t, std::string>{{1, Target(3)}}));
  EXPECT_EQ(held->target(), Target(2)) << "the open request still has its worker";
  pool->Refresh();
  EXPECT_FALSE(watch.expired()) << "the pool keeps the link while a request holds it";
  held->EndRequest();
  held.reset();
  EXPECT_FALSE(watch.expired()) << "released on the pool's thread, not the request's";
  pool->Refresh();
  EXPECT_TRUE(watch.expired()) << "dropped once nothing holds it";
}

TEST_F(WorkerPoolTest, PollThreadResolvesAgainOnItsOwn) {
  dns_.Set(std::vector<std::string>{"127.0.0.1"});
  auto pool = MakePool(std::chrono::milliseconds(1));
  pool->StartPolling();
  dns_.Set(std::vector<std::string>{"127.0.0.1", "127.0.0.3"});
  // Lookups are sequential on the poll thread: the second one after the change started after a
  // refresh that saw the change had been applied.
  ASSERT_TRUE(dns_.WaitForLookups(dns_.lookups() + 2));
  EXPECT_EQ(Members(*pool), (std::map<uint32_t, std::string>{{0, Target(1)}, {1, Target(3)}}));
  pool->StopPolling();
}

TEST_F(WorkerPoolTest, FixedTargetsAreWorkersInOrderAndLookNothingUp) {
  WorkerPoolOptions options;
  options.resolver = dns_.resolver();
  WorkerPool pool({Target(3), "unix:/nonexistent/w.sock", Target(1)}, options);
  EXPECT_EQ(Members(pool), (std::map<uint32_t, std::string>{
                               {0, Target(3)}, {1, "unix:/nonexistent/w.sock"}, {2, Target(1)}}));
  EXPECT_EQ(pool.link(1)->target(), "unix:/nonexistent/w.sock");
  EXPECT_EQ(pool.link(3), nullptr);
  pool.Refresh();
  EXPECT_EQ(dns_.lookups(), 0);
}

}  // namespace
}  // namespace smallmind::gateway
