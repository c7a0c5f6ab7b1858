// The gateway's admission through its HTTP door: an in-process Gateway with the HttpDoor,
// attached to a fake worker whose "block" streams run until cancelled, one slot per worker and a
// queue of one, so which requests run, wait and are refused is decided by arrival alone (as
// tests/gateway/admission_test.cc does for the gRPC door). Raw HTTP from tests/http/http_client.h.
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "gateway/admission/admission_queue.h"
#include "gateway/gateway.h"
#include "gateway/http/http_door.h"
#include "tests/gateway/fake_worker.h"
#include "tests/gateway/http/http_gateway.h"
#include "tests/http/http_client.h"
#include "tests/testing/scoped_temp_dir.h"

namespace smallmind::gateway::http {
namespace {

using gateway::testing::FakeWorker;
using smallmind::testing::HttpCall;
using smallmind::testing::HttpReply;

constexpr std::chrono::milliseconds kWait{10000};  // bound on every wait; never reached passing

// One POST /v1/completions on its own thread (the fake worker's "block" prompt holds it). Going
// out of scope (also after a failed ASSERT) cancels every stream of `gateway`, so the join ends.
class Call {
 public:
  Call(Gateway& gateway, std::string base, std::string body)
      : gateway_(gateway), thread_([this, base = std::move(base), body = std::move(body)] {
          reply_ = HttpCall(base, "POST", "/v1/completions", body);
        }) {}
  ~Call() {
    gateway_.CancelStreams();
    if (thread_.joinable()) thread_.join();
  }

 private:
  Gateway& gateway_;
  HttpReply reply_;
  std::thread thread_;  // last: started once the rest exists
};

class HttpAdmissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    worker_ = std::make_unique<FakeWorker>(0, tmp_.File("w0.sock"));
    ASSERT_TRUE(worker_->started());
    GatewayConfig config = gateway::testing::OneWorkerConfig(*worker_);
    config.admission.max_in_flight_per_worker = 1;
    config.admission.max_queue = 1;
    // Nothing is measured yet, so this is the hint: 2.5 s, which Retry-After rounds up to 3.
    config.admission.retry_after_unmeasured = std::chrono::milliseconds(2500);
    config.http.port = 0;
    const shared::Status status = gateway::testing::StartWithHttpDoor(config, &gateway_, &door_);
    ASSERT_TRUE(status.ok()) << status.ToString();
    base_ = door_->address();
  }
  // Shutdown ends the blocked calls (cancelled after the drain), then their threads join.
  void TearDown() override {
    if (gateway_) gateway_->Shutdown();
    if (worker_) worker_->Shutdown();
  }

  // A request the fake worker holds until it is cancelled.
  static std::string Blocking(const std::string& extra = "") {
    return R"({"prompt":"block","max_tokens":4)" + extra + "}";
  }

  smallmind::testing::ScopedTempDir tmp_;
  std::unique_ptr<FakeWorker> worker_;
  std::unique_ptr<Gateway> gateway_;
  HttpDoor* door_ = nullptr;  // owned by gateway_
  std::string base_;
};

TEST_F(HttpAdmissionTest, FullQueueAnswers429WithRetryAfterInWholeSecondsRoundedUp) {
  Call running(*gateway_, base_, Blocking());
  ASSERT_TRUE(worker_->WaitForSubmits(1, kWait));
  Call waiting(*gateway_, base_, Blocking());
  ASSERT_TRUE(gateway_->admission().WaitForWaiting(1, kWait));
  for (const bool stream : {false, true}) {
    const HttpReply excess =
        HttpCall(base_, "POST", "/v1/completions", Blocking(stream ? R"(,"stream":true)" : ""));
    ASSERT_TRUE(excess.ok) << excess.error;
    EXPECT_EQ(excess.status, 429) << excess.body;
    EXPECT_EQ(excess.headers["Retry-After"], "3") << "2500 ms rounded up to whole seconds";
    EXPECT_EQ(excess.json()["error"]["type"], "rate_limit_error") << excess.body;
    EXPECT_EQ(excess.json()["error"]["code"], "queue_full") << excess.body;
    EXPECT_NE(excess.body.find("queue is full"), std::string::npos) << excess.body;
  }
  // Only the excess was refused: the running and the waiting request are still there.
  EXPECT_EQ(gateway_->admission().counts().admitted, 1u);
  EXPECT_EQ(gateway_->admission().counts().waiting, 1u);
  EXPECT_EQ(worker_->submits(), 1);
}

TEST_F(HttpAdmissionTest, DeadlinePassingInTheQueueAnswers504) {
  Call running(*gateway_, base_, Blocking());
  ASSERT_TRUE(worker_->WaitForSubmits(1, kWait));
  // Our `timeout` field is the deadline; the only slot stays taken, so it passes in the queue.
  const HttpReply late = HttpCall(base_, "POST", "/v1/completions", Blocking(R"(,"timeout":0.2)"));
  ASSERT_TRUE(late.ok) << late.error;
  EXPECT_EQ(late.status, 504) << late.body;
  EXPECT_EQ(late.json()["error"]["type"], "timeout_error") << late.body;
  EXPECT_NE(late.body.find("deadline"), std::string::npos) << late.body;
  EXPECT_EQ(gateway_->admission().counts().waiting, 0u);
  EXPECT_EQ(worker_->submits(), 1) << "it never reached the worker";
}

TEST_F(HttpAdmissionTest, NoHealthyWorkerAnswers503WithoutWaiting) {
  worker_->Shutdown();          // the poller cannot bring it back
  gateway_->pool().PollOnce();  // its poll fails: unhealthy
  ASSERT_EQ(gateway_->pool().HealthyCount(), 0u);
  const HttpReply reply = HttpCall(base_, "POST", "/v1/completions", Blocking());
  ASSERT_TRUE(reply.ok) << reply.error;
  EXPECT_EQ(reply.status, 503) << reply.body;
  EXPECT_EQ(reply.json()["error"]["type"], "service_unavailable_error") << reply.body;
  EXPECT_NE(reply.body.find("no healthy worker"), std::string::npos) << reply.body;
  EXPECT_EQ(reply.headers.count("Retry-After"), 0u);
}

}  // namespace
}  // namespace smallmind::gateway::http
