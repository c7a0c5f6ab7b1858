// RequestRelay driven as a non-gRPC door would drive it (a plain RelayConsumer, as the HTTP server
// will be) against fake workers on Unix sockets, with a scripted Admission standing in for issue
// 10's queue: one delivery at a time, cancellation, admission, deadline, no worker.
#include "gateway/relay/request_relay.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tests/gateway/fake_worker.h"
#include "tests/testing/scoped_temp_dir.h"

namespace smallmind::gateway {
namespace {

using smallmind::v1::GenerateRequest;
using smallmind::v1::GenerateResponse;
using testing::FakeWorker;

constexpr std::chrono::milliseconds kWait{
    10000};  // bound on every wait; never reached when passing
constexpr auto kNoDeadline = std::chrono::system_clock::time_point::max();

// Records what the relay hands over. With `auto_ack`, each delivery is acknowledged inline from
// Deliver (a consumer calling back into the relay); otherwise the test acknowledges with Ack().
// The test thread may destroy it as soon as Complete is published, so each method's last touch of
// the object is under mu_, with the notification.
class RecordingConsumer final : public RelayConsumer {
 public:
  explicit RecordingConsumer(bool auto_ack, bool detach_on_complete = false)
      : auto_ack_(auto_ack), detach_on_complete_(detach_on_complete) {}

  void Deliver(const GenerateResponse& message) override {
    const bool ack = auto_ack_;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (outstanding_ || status_) broken_ = true;  // one delivery at a time, none after Complete
      outstanding_ = true;
      messages_.push_back(message);
      changed_.notify_all();
    }
    if (ack) Ack(true);  // Complete cannot come before this acknowledgement
  }
  void Complete(const RelayOutcome& outcome) override {
    if (detach_on_complete_) relay->Detach();  // allowed from inside Complete
    std::lock_guard<std::mutex> lock(mu_);
    if (outstanding_ || status_) broken_ = true;
    status_ = outcome.status;
    retry_after_ = outcome.retry_after;
    changed_.notify_all();
  }

  void Ack(bool ok) {
    RequestRelay* r = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      outstanding_ = false;
      r = relay;
    }
    r->OnDelivered(ok);  // may complete the request inline: nothing follows
  }
  bool WaitForMessages(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, kWait, [&] { return messages_.size() >= n; });
  }
  std::optional<shared::Status> WaitForComplete() {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait_for(lock, kWait, [&] { return status_.has_value(); });
    return status_;
  }
  std::optional<shared::Status> status() {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }
  std::optional<std::chrono::milliseconds> retry_after() {
    std::lock_guard<std::mutex> lock(mu_);
    return retry_after_;
  }
  std::vector<GenerateResponse> messages() {
    std::lock_guard<std::mutex> lock(mu_);
    return messages_;
  }
  bool broken() {
    std::lock_guard<std::mutex> lock(mu_);
    return broken_;
  }

  RequestRelay* relay = nullptr;

 private:
  const bool auto_ack_;
  const bool detach_on_complete_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<GenerateResponse> messages_;
  std::optional<shared::Status> status_;
  std::optional<std::chrono::milliseconds> retry_after_;
  bool outstanding_ = false;
  bool broken_ = false;
};

// Holds every request until the test answers it; a withdrawn request is answered CANCELLED.
class ScriptedAdmission final : public Admission {
 public:
  void Enter(AdmissionWaiter* waiter, const ValidatedRequest&,
             std::chrono::system_clock::time_point) override {
    std::lock_guard<std::mutex> lock(mu_);
    waiting_ = waiter;
    ++entered_;
  }
  void Withdraw(AdmissionWaiter*) override {
    AdmissionWaiter* waiter = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++withdrawn_;
      waiter = std::exchange(waiting_, nullptr);
    }
    if (waiter) waiter->OnAdmitted({{shared::StatusCode::kCancelled, "withdrawn"}, std::nullopt});
  }
  void Leave(AdmissionWaiter*, const std::optional<ServiceSample>& served) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++left_;
    served_ = served;
  }
  void Answer(shared::Status status,
              std::optional<std::chrono::milliseconds> retry_after = std::nullopt) {
    AdmissionWaiter* waiter = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      waiter = std::exchange(waiting_, nullptr);
    }
    ASSERT_NE(waiter, nullptr);
    waiter->OnAdmitted({std::move(status), retry_after});
  }
  int entered() { return Get(entered_); }
  int withdrawn() { return Get(withdrawn_); }
  int left() { return Get(left_); }
  std::optional<ServiceSample> served() {
    std::lock_guard<std::mutex> lock(mu_);
    return served_;
  }

 private:
  int Get(const int& n) {
    std::lock_guard<std::mutex> lock(mu_);
    return n;
  }
  std::mutex mu_;
  AdmissionWaiter* waiting_ = nullptr;
  int entered_ = 0;
  int withdrawn_ = 0;
  int left_ = 0;
  std::optional<ServiceSample> served_;
};

class RequestRelayTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (env_) {
      EXPECT_TRUE(env_->active.WaitUntilZero(kWait)) << "a relay was never deleted";
    }
    env_.reset();
    workers_.clear();
  }

  // One healthy fake worker (or, with `workers` = 0, one endpoint nobody serves).
  void StartEnv(size_t outbox, std::unique_ptr<Admission> admission = nullptr, int workers = 1) {
    std::vector<std::string> targets;
    for (int i = 0; i < workers; ++i) {
      workers_.push_back(std::make_unique<FakeWorker>(static_cast<uint32_t>(i),
                                                      dir_ + "/w" + std::to_string(i) + ".sock"));
      ASSERT_TRUE(workers_.back()->started());
      targets.push_back(workers_.back()->target());
    }
    if (workers == 0) targets.push_back("unix:" + dir_ + "/nobody.sock");
    env_ = std::make_shared<RelayEnv>();
    env_->options.outbox_capacity = outbox;
    if (admission) env_->admission = std::move(admission);
    env_->pool = std::make_shared<WorkerPool>(targets, WorkerPoolOptions{});
    env_->pool->PollOnce();
  }

  static shared::Result<ValidatedRequest> Request(const std::string& prompt, uint32_t tokens) {
    GenerateRequest request;
    request.set_prompt(prompt);
    request.mutable_stopping()->set_max_new_tokens(tokens);
    return Validate(request, "relay-test-1");
  }

  RequestRelay* StartRelay(RecordingConsumer& consumer, const std::string& prompt, uint32_t tokens,
                           std::chrono::system_clock::time_point deadline = kNoDeadline) {
    auto* relay = new RequestRelay(env_, &consumer);
    consumer.relay = relay;
    relay->Start(Request(prompt, tokens), deadline);
    return relay;
  }

  smallmind::testing::ScopedTempDir tmp_;
  const std::string dir_ = tmp_.path();
  std::vector<std::unique_ptr<FakeWorker>> workers_;
  std::shared_ptr<RelayEnv> env_;
};

TEST_F(RequestRelayTest, PlainConsumerReceivesEveryMessageInOrderThenOk) {
  StartEnv(/*outbox=*/4);
  RecordingConsumer consumer(/*auto_ack=*/true);
  RequestRelay* relay = StartRelay(consumer, "hello", 50);
  const auto status = consumer.WaitForComplete();
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(status->ok()) << status->ToString();
  const auto messages = consumer.messages();
  ASSERT_EQ(messages.size(), 50u);
  for (size_t i = 0; i < messages.size(); ++i) {
    EXPECT_EQ(messages[i].token_ids(0), i + 1);
    EXPECT_EQ(messages[i].request_id(), "relay-test-1");
  }
  EXPECT_EQ(messages.back().timings().worker_id(), 0u);
  EXPECT_GT(messages.back().timings().ttft_ms(), 0.0);
  EXPECT_FALSE(consumer.broken());
  relay->Detach();
}

TEST_F(RequestRelayTest, SlowConsumerGetsOneMessageAtATimeInOrder) {
  StartEnv(/*outbox=*/2);
  RecordingConsumer consumer(/*auto_ack=*/false);
  RequestRelay* relay = StartRelay(consumer, "hello", 30);
  for (size_t i = 1; i <= 30; ++i) {
    ASSERT_TRUE(consumer.WaitForMessages(i)) << "message " << i;
    EXPECT_EQ(consumer.messages().size(), i);  // nothing more until this one is acknowledged
    EXPECT_EQ(consumer.messages().back().token_ids(0), i);
    consumer.Ack(true);
  }
  const auto status = consumer.WaitForComplete();
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(status->ok()) << status->ToString();
  EXPECT_FALSE(consumer.broken());
  relay->Detach();
}

TEST_F(RequestRelayTest, CancelReachesTheWorkerAndCompletesOnlyAfterTheOutstandingDelivery) {
  StartEnv(/*outbox=*/2);
  RecordingConsumer consumer(/*auto_ack=*/false);
  RequestRelay* relay = StartRelay(consumer, "block-after-1", 8);
  ASSERT_TRUE(consumer.WaitForMessages(1));
  relay->Cancel();
  EXPECT_TRUE(workers_[0]->WaitForCancels(1, kWait));
  EXPECT_FALSE(consumer.status().has_value());  // a delivery is still outstanding
  consumer.Ack(true);
  const auto status = consumer.WaitForComplete();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->code(), shared::StatusCode::kCancelled);
  EXPECT_EQ(consumer.messages().size(), 1u);
  EXPECT_FALSE(consumer.broken());
  relay->Detach();
}

TEST_F(RequestRelayTest, ConsumerMayDetachFromCompleteBeforeTheWorkerAttemptEnds) {
  StartEnv(/*outbox=*/2);
  RecordingConsumer consumer(/*auto_ack=*/true, /*detach_on_complete=*/true);
  RequestRelay* relay = StartRelay(consumer, "block", 0);
  ASSERT_TRUE(workers_[0]->WaitForSubmits(1, kWait));
  relay->Cancel();  // Complete(CANCELLED) and Detach happen inside this call
  const auto status = consumer.status();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->code(), shared::StatusCode::kCancelled);
  EXPECT_TRUE(workers_[0]->WaitForCancels(1, kWait));
  // TearDown checks that the relay deleted itself once its worker call ended.
}

TEST_F(RequestRelayTest, QueuedAdmissionDecidesWhenTheWorkerIsCalled) {
  auto owned = std::make_unique<ScriptedAdmission>();
  ScriptedAdmission* admission = owned.get();
  StartEnv(/*outbox=*/4, std::move(owned));
  RecordingConsumer consumer(/*auto_ack=*/true);
  RequestRelay* relay = StartRelay(consumer, "hello", 3);
  EXPECT_EQ(admission->entered(), 1);
  EXPECT_EQ(workers_[0]->submits(), 0);
  admission->Answer(shared::Status::Ok());
  const auto status = consumer.WaitForComplete();
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(status->ok()) << status->ToString();
  EXPECT_EQ(consumer.messages().size(), 3u);
  EXPECT_EQ(workers_[0]->submits(), 1);
  EXPECT_EQ(admission->left(), 1);  // its place is given back by the time the client hears
  // with what the finished request tells about the worker's speed
  const auto served = admission->served();
  ASSERT_TRUE(served.has_value());
  EXPECT_EQ(served->completion_tokens, 3u);
  EXPECT_EQ(served->max_new_tokens, 3u);
  EXPECT_EQ(served->prompt_bytes, 5u);
  EXPECT_FALSE(consumer.retry_after().has_value());
  relay->Detach();
}

TEST_F(RequestRelayTest, AdmissionRefusalIsTheOutcomeAndNoWorkerIsCalled) {
  auto owned = std::make_unique<ScriptedAdmission>();
  ScriptedAdmission* admission = owned.get();
  StartEnv(/*outbox=*/4, std::move(owned));
  RecordingConsumer consumer(/*auto_ack=*/true);
  RequestRelay* relay = StartRelay(consumer, "hello", 3);
  admission->Answer(shared::ResourceExhausted("gateway queue full (8 waiting)"),
                    std::chrono::milliseconds(1234));
  const auto status = consumer.status();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->code(), shared::StatusCode::kResourceExhausted);
  EXPECT_EQ(status->message(), "gateway queue full (8 waiting)");
  EXPECT_EQ(consumer.retry_after(), std::chrono::milliseconds(1234));
  EXPECT_EQ(workers_[0]->submits(), 0);
  EXPECT_EQ(admission->left(), 0);
  relay->Detach();
}

TEST_F(RequestRelayTest, CancelWhileQueuedWithdrawsFromAdmission) {
  auto owned = std::make_unique<ScriptedAdmission>();
  ScriptedAdmission* admission = owned.get();
  StartEnv(/*outbox=*/4, std::move(owned));
  RecordingConsumer consumer(/*auto_ack=*/true);
  RequestRelay* relay = StartRelay(consumer, "hello", 3);
  relay->Cancel();
  EXPECT_EQ(admission->withdrawn(), 1);
  const auto status = consumer.status();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->code(), shared::StatusCode::kCancelled);
  EXPECT_EQ(workers_[0]->submits(), 0);
  relay->Detach();
}

TEST_F(RequestRelayTest, ExpiredDeadlineEndsDeadlineExceeded) {
  StartEnv(/*outbox=*/4);
  RecordingConsumer consumer(/*auto_ack=*/true);
  RequestRelay* relay =
      StartRelay(consumer, "block", 0, std::chrono::system_clock::now() - std::chrono::seconds(1));
  const auto status = consumer.WaitForComplete();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->code(), shared::StatusCode::kDeadlineExceeded) << status->ToString();
  relay->Detach();
}

TEST_F(RequestRelayTest, CancelAfterTheDeadlinePassedEndsDeadlineExceeded) {
  // gRPC cancels a server call when its deadline passes; the relay names that cause. The scripted
  // admission holds the request, so the deadline (already past) is met only by the Cancel.
  auto owned = std::make_unique<ScriptedAdmission>();
  ScriptedAdmission* admission = owned.get();
  StartEnv(/*outbox=*/4, std::move(owned));
  RecordingConsumer consumer(/*auto_ack=*/true);
  RequestRelay* relay =
      StartRelay(consumer, "hello", 3, std::chrono::system_clock::now() - std::chrono::seconds(1));
  relay->Cancel();
  EXPECT_EQ(admission->withdrawn(), 1);
  const auto status = consumer.status();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->code(), shared::StatusCode::kDeadlineExceeded) << status->ToString();
  EXPECT_EQ(workers_[0]->submits(), 0);
  relay->Detach();
}

TEST_F(RequestRelayTest, DeliveryFailingLongBeforeTheDeadlineEndsCancelled) {
  StartEnv(/*outbox=*/4);
  RecordingConsumer consumer(/*auto_ack=*/false);
  RequestRelay* relay = StartRelay(consumer, "block-after-1", 8,
                                   std::chrono::system_clock::now() + std::chrono::hours(1));
  ASSERT_TRUE(consumer.WaitForMessages(1));
  consumer.Ack(false);
  const auto status = consumer.WaitForComplete();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->code(), shared::StatusCode::kCancelled) << status->ToString();
  relay->Detach();
}

TEST_F(RequestRelayTest, NoHealthyWorkerCompletesUnavailable) {
  StartEnv(/*outbox=*/4, nullptr, /*workers=*/0);
  RecordingConsumer consumer(/*auto_ack=*/true);
  RequestRelay* relay = StartRelay(consumer, "hello", 3);
  const auto status = consumer.status();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->code(), shared::StatusCode::kUnavailable);
  EXPECT_EQ(status->message(), "no healthy worker (0 of 1 ready)");
  relay->Detach();
}

TEST_F(RequestRelayTest, InvalidRequestCompletesWithItsErrorAtOnce) {
  StartEnv(/*outbox=*/4);
  RecordingConsumer consumer(/*auto_ack=*/true);
  auto* relay = new RequestRelay(env_, &consumer);
  consumer.relay = relay;
  relay->Start(shared::InvalidArgument("sampling.top_p must be in (0, 1], got 1.5"), kNoDeadline);
  const auto status = consumer.status();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->code(), shared::StatusCode::kInvalidArgument);
  EXPECT_EQ(workers_[0]->submits(), 0);
  relay->Detach();
}

}  // namespace
}  // namespace smallmind::gateway
