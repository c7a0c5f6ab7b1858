#include "gateway/models/load_gate.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gateway/admission/validate.h"

namespace smallmind::gateway {
namespace {

using std::chrono::system_clock;

// Records what the gate (or the inner admission) answered.
struct Waiter : AdmissionWaiter {
  void OnAdmitted(AdmissionAnswer answer) override { answers.push_back(answer.status); }
  std::vector<shared::Status> answers;
};

// The inner admission: admits at once and counts the calls.
struct CountingAdmission : Admission {
  void Enter(AdmissionWaiter* waiter, const ValidatedRequest& request,
             system_clock::time_point) override {
    entered.push_back(request.request_id());
    waiter->OnAdmitted({});
  }
  void Withdraw(AdmissionWaiter*) override { ++withdrawn; }
  void Leave(AdmissionWaiter*, const std::optional<ServiceSample>&) override { ++left; }
  std::vector<std::string> entered;
  int withdrawn = 0;
  int left = 0;
};

ValidatedRequest Request(const std::string& id) {
  smallmind::v1::GenerateRequest request;
  request.set_prompt("hello");
  request.set_request_id(id);
  auto validated = Validate(request, id);
  EXPECT_TRUE(validated.ok());
  return *validated;
}

class LoadGateTest : public ::testing::Test {
 protected:
  LoadGateTest() {
    auto inner = std::make_unique<CountingAdmission>();
    inner_ = inner.get();
    gate_ = std::make_unique<LoadGate>(std::move(inner), [this] { ++wanted_; });
  }
  CountingAdmission* inner_ = nullptr;
  int wanted_ = 0;
  std::unique_ptr<LoadGate> gate_;
};

TEST_F(LoadGateTest, RequestsWaitWhileClosedAndAskForTheLoad) {
  Waiter a, b;
  gate_->Enter(&a, Request("a"), system_clock::time_point::max());
  gate_->Enter(&b, Request("b"), system_clock::time_point::max());
  EXPECT_EQ(gate_->waiting(), 2u);
  EXPECT_EQ(wanted_, 2);
  EXPECT_TRUE(a.answers.empty());
  EXPECT_TRUE(inner_->entered.empty());
  gate_->Open();
  EXPECT_EQ(inner_->entered, (std::vector<std::string>{"a", "b"}));  // in arrival order
  ASSERT_EQ(a.answers.size(), 1u);
  EXPECT_TRUE(a.answers[0].ok());
  EXPECT_EQ(gate_->waiting(), 0u);
}

TEST_F(LoadGateTest, AnOpenGatePassesStraightOn) {
  gate_->Open();
  Waiter a;
  gate_->Enter(&a, Request("a"), system_clock::time_point::max());
  EXPECT_EQ(wanted_, 0);
  EXPECT_EQ(inner_->entered.size(), 1u);
  gate_->Withdraw(&a);
  gate_->Leave(&a, std::nullopt);
  EXPECT_EQ(inner_->withdrawn, 1);
  EXPECT_EQ(inner_->left, 1);
  gate_->Close();
  Waiter b;
  gate_->Enter(&b, Request("b"), system_clock::time_point::max());
  EXPECT_EQ(gate_->waiting(), 1u);
  EXPECT_EQ(wanted_, 1);
  gate_->Fail(shared::Unavailable("x"));
}

TEST_F(LoadGateTest, AFailedLoadAnswersTheWaitingUnavailableWithItsReason) {
  Waiter a;
  gate_->Enter(&a, Request("a"), system_clock::time_point::max());
  gate_->Fail(shared::Unavailable("the model `m` could not be loaded: no such file"));
  ASSERT_EQ(a.answers.size(), 1u);
  EXPECT_EQ(a.answers[0].code(), shared::StatusCode::kUnavailable);
  EXPECT_EQ(a.answers[0].message(), "the model `m` could not be loaded: no such file");
  EXPECT_TRUE(inner_->entered.empty());
}

TEST_F(LoadGateTest, DeadlinesAndCancelsEndAWait) {
  const auto t0 = system_clock::now();
  Waiter early, late, cancelled;
  gate_->Enter(&early, Request("early"), t0 + std::chrono::seconds(1));
  gate_->Enter(&late, Request("late"), t0 + std::chrono::seconds(10));
  gate_->Enter(&cancelled, Request("cancelled"), system_clock::time_point::max());
  gate_->Expire(t0 + std::chrono::seconds(2));
  ASSERT_EQ(early.answers.size(), 1u);
  EXPECT_EQ(early.answers[0].code(), shared::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(late.answers.empty());
  gate_->Withdraw(&cancelled);
  ASSERT_EQ(cancelled.answers.size(), 1u);
  EXPECT_EQ(cancelled.answers[0].code(), shared::StatusCode::kCancelled);
  EXPECT_EQ(inner_->withdrawn, 0);
  gate_->Open();
  EXPECT_EQ(inner_->entered, (std::vector<std::string>{"late"}));
}

TEST_F(LoadGateTest, WhenOpenWaitsForTheLoadWithoutEnteringTheInnerAdmission) {
  std::vector<shared::Status> seen;
  auto record = [&seen](const shared::Status& s) { seen.push_back(s); };
  const auto t0 = system_clock::now();
  gate_->WhenOpen(record, system_clock::time_point::max());
  gate_->WhenOpen(record, t0 + std::chrono::seconds(1));
  EXPECT_EQ(wanted_, 2) << "a wait asks for the load";
  EXPECT_EQ(gate_->waiting(), 2u) << "waits count: the model is busy meanwhile";
  EXPECT_TRUE(seen.empty());
  gate_->Expire(t0 + std::chrono::seconds(2));
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].code(), shared::StatusCode::kDeadlineExceeded);
  gate_->Open();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_TRUE(seen[1].ok());
  EXPECT_EQ(gate_->waiting(), 0u);
  EXPECT_TRUE(inner_->entered.empty()) << "a wait takes no place in the queue";
  gate_->WhenOpen(record, t0);
  ASSERT_EQ(seen.size(), 3u) << "an open gate answers inline";
  EXPECT_TRUE(seen[2].ok());
  EXPECT_EQ(wanted_, 2);
}

TEST_F(LoadGateTest, WhenOpenHearsAFailedLoadsReason) {
  std::vector<shared::Status> seen;
  gate_->WhenOpen([&seen](const shared::Status& s) { seen.push_back(s); },
                  system_clock::time_point::max());
  gate_->Fail(shared::Unavailable("the model `m` could not be loaded: no such file"));
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].code(), shared::StatusCode::kUnavailable);
  EXPECT_EQ(seen[0].message(), "the model `m` could not be loaded: no such file");
  EXPECT_EQ(gate_->waiting(), 0u);
}

// A cancel that reaches the gate while Open() hands its waiter over goes to the inner admission
// after the waiter's Enter there, never before it (where the inner one would not know it yet).
TEST(LoadGateHandoverTest, AWithdrawDuringOpenFollowsTheEnterInside) {
  struct CancellingAdmission : CountingAdmission {
    void Enter(AdmissionWaiter* waiter, const ValidatedRequest& request,
               system_clock::time_point deadline) override {
      gate->Withdraw(waiter);  // the client cancels just as its model became ready
      EXPECT_EQ(withdrawn, 0) << "forwarded before the Enter";
      CountingAdmission::Enter(waiter, request, deadline);
    }
    LoadGate* gate = nullptr;
  };
  auto inner = std::make_unique<CancellingAdmission>();
  CancellingAdmission* seen = inner.get();
  LoadGate gate(std::move(inner), nullptr);
  seen->gate = &gate;
  Waiter a;
  gate.Enter(&a, Request("a"), system_clock::time_point::max());
  gate.Open();
  EXPECT_EQ(seen->entered, (std::vector<std::string>{"a"}));
  EXPECT_EQ(seen->withdrawn, 1);
}

}  // namespace
}  // namespace smallmind::gateway
