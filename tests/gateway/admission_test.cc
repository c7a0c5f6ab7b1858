// The gateway's admission through its gRPC door: an in-process Gateway attached to a fake worker
// whose streams block until cancelled, with one slot per worker and a queue of two, so which
// requests run, wait and are refused is decided by arrival alone.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "gateway/admission/admission_queue.h"
#include "gateway/gateway.h"
#include "gateway/metrics/gateway_metrics.h"
#include "smallmind/v1/inference.grpc.pb.h"
#include "tests/gateway/fake_worker.h"
#include "tests/testing/scoped_temp_dir.h"

namespace smallmind::gateway {
namespace {

using smallmind::v1::GenerateRequest;
using smallmind::v1::GenerateResponse;
using testing::FakeWorker;

constexpr std::chrono::milliseconds kWait{
    10000};  // bound on every wait; never reached when passing

// One Generate stream on its own thread; the test cancels it through its context.
class Stream {
 public:
  Stream(smallmind::v1::Inference::Stub& stub, const GenerateRequest& request) {
    context_.set_deadline(std::chrono::system_clock::now() + kWait);
    thread_ = std::thread([this, &stub, request] {
      auto reader = stub.Generate(&context_, request);
      GenerateResponse message;
      while (reader->Read(&message)) ++messages_;
      status_ = reader->Finish();
    });
  }
  ~Stream() { Join(); }
  void Cancel() { context_.TryCancel(); }
  const grpc::Status& Join() {
    if (thread_.joinable()) thread_.join();
    return status_;
  }
  // After Join: the trailing metadata the gateway sent.
  std::optional<std::string> Trailer(const std::string& key) const {
    const auto& trailers = context_.GetServerTrailingMetadata();
    auto it = trailers.find(key);
    if (it == trailers.end()) return std::nullopt;
    return std::string(it->second.data(), it->second.size());
  }

 private:
  grpc::ClientContext context_;
  std::thread thread_;
  int messages_ = 0;
  grpc::Status status_;
};

class AdmissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    worker_ = std::make_unique<FakeWorker>(0, tmp_.File("w0.sock"));
    ASSERT_TRUE(worker_->started());
    GatewayConfig config = gateway::testing::OneWorkerConfig(*worker_);
    config.admission.max_in_flight_per_worker = 1;
    config.admission.max_queue = 2;
    gateway_ = std::make_unique<Gateway>(config);
    const shared::Status status = gateway_->Start();
    ASSERT_TRUE(status.ok()) << status.ToString();
    channel_ = grpc::CreateChannel(gateway_->connect_address(), grpc::InsecureChannelCredentials());
    stub_ = smallmind::v1::Inference::NewStub(channel_);
  }
  void TearDown() override {
    if (gateway_) gateway_->Shutdown();
    if (worker_) worker_->Shutdown();
  }

  static GenerateRequest Blocking(const std::string& id) {
    GenerateRequest request;
    request.set_request_id(id);
    request.set_prompt("block");
    return request;
  }

  smallmind::testing::ScopedTempDir tmp_;
  std::unique_ptr<FakeWorker> worker_;
  std::unique_ptr<Gateway> gateway_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<smallmind::v1::Inference::Stub> stub_;
};

TEST_F(AdmissionTest, QueueOverflowRefusesOnlyTheExcessWithARetryHint) {
  Stream running(*stub_, Blocking("running"));
  ASSERT_TRUE(worker_->WaitForSubmits(1, kWait));
  Stream first(*stub_, Blocking("first"));
  ASSERT_TRUE(gateway_->admission().WaitForWaiting(1, kWait));  // so that arrival order is known
  Stream second(*stub_, Blocking("second"));
  ASSERT_TRUE(gateway_->admission().WaitForWaiting(2, kWait));
  // The queue shows in /metrics (the fake worker reports no waiting sequence of its own).
  const std::string metrics = gateway_->metrics()->RenderText();
  EXPECT_NE(metrics.find("\nsmallmind_request_queue_depth{model=\"fake\",model_name=\"fake\"} 2\n"),
            std::string::npos)
      << metrics;
  for (const std::string id : {"excess-1", "excess-2"}) {
    Stream excess(*stub_, Blocking(id));
    EXPECT_EQ(excess.Join().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << id;
    EXPECT_NE(excess.Join().error_message().find("queue is full"), std::string::npos)
        << excess.Join().error_message();
    const auto hint = excess.Trailer("retry-after-ms");
    ASSERT_TRUE(hint.has_value()) << id << " has no retry-after-ms";
    EXPECT_GE(std::stoll(*hint), 1);
  }
  EXPECT_EQ(worker_->submits(), 1);  // the waiting ones have not reached the worker
  // Each slot given back lets the next waiter through, in arrival order.
  running.Cancel();
  ASSERT_TRUE(worker_->WaitForSubmits(2, kWait));
  EXPECT_EQ(worker_->last_submit().request().request_id(), "first");
  first.Cancel();
  ASSERT_TRUE(worker_->WaitForSubmits(3, kWait));
  EXPECT_EQ(worker_->last_submit().request().request_id(), "second");
  second.Cancel();
  for (Stream* s : {&running, &first, &second}) {
    EXPECT_EQ(s->Join().error_code(), grpc::StatusCode::CANCELLED);
  }
  EXPECT_EQ(worker_->submits(), 3);
}

TEST_F(AdmissionTest, CancelWhileQueuedNeverReachesTheWorker) {
  Stream running(*stub_, Blocking("running"));
  ASSERT_TRUE(worker_->WaitForSubmits(1, kWait));
  Stream waiting(*stub_, Blocking("waiting"));
  ASSERT_TRUE(gateway_->admission().WaitForWaiting(1, kWait));
  waiting.Cancel();
  EXPECT_EQ(waiting.Join().error_code(), grpc::StatusCode::CANCELLED);
  // The client knows at once; the gateway takes the request out of its queue when the cancel
  // reaches it, before any slot frees.
  ASSERT_TRUE(gateway_->admission().WaitForWaiting(0, kWait));
  running.Cancel();
  EXPECT_EQ(running.Join().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(worker_->submits(), 1);
}

TEST_F(AdmissionTest, DeadlinePassingInTheQueueEndsDeadlineExceeded) {
  Stream running(*stub_, Blocking("running"));
  ASSERT_TRUE(worker_->WaitForSubmits(1, kWait));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(100));
  auto reader = stub_->Generate(&context, Blocking("short-deadline"));
  GenerateResponse message;
  EXPECT_FALSE(reader->Read(&message));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  // The gateway takes it out of the queue at its deadline too, before any slot frees.
  ASSERT_TRUE(gateway_->admission().WaitForWaiting(0, kWait));
  running.Cancel();
  EXPECT_EQ(running.Join().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(worker_->submits(), 1);
}

}  // namespace
}  // namespace smallmind::gateway
