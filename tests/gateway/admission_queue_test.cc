// AdmissionQueue on its own: recording waiters, a slot count the test sets, no gRPC. Queue bound,
// priority order, displacement, withdrawal, deadlines (at entry, while waiting, estimated) and the
// retry hint.
#include "gateway/admission/admission_queue.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace smallmind::gateway {
namespace {

using std::chrono::milliseconds;
using SystemClock = std::chrono::system_clock;
using shared::StatusCode;

constexpr milliseconds kWait{10000};  // bound on every wait; never reached when passing
constexpr auto kNoDeadline = SystemClock::time_point::max();

// Every answer goes into one shared log, in the order the queue gave them.
struct AnswerLog {
  std::mutex mu;
  std::condition_variable changed;
  std::vector<std::pair<std::string, AdmissionAnswer>> answers;

  bool WaitForCount(size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    return changed.wait_for(lock, kWait, [&] { return answers.size() >= n; });
  }
  std::vector<std::string> AdmittedNames() {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<std::string> names;
    for (const auto& [name, answer] : answers) {
      if (answer.status.ok()) names.push_back(name);
    }
    return names;
  }
};

class Waiter final : public AdmissionWaiter {
 public:
  Waiter(std::string name, AnswerLog* log) : name_(std::move(name)), log_(log) {}
  void OnAdmitted(AdmissionAnswer answer) override {
    std::lock_guard<std::mutex> lock(log_->mu);
    EXPECT_FALSE(answer_.has_value()) << name_ << " answered twice";
    answer_ = answer;
    log_->answers.emplace_back(name_, std::move(answer));
    log_->changed.notify_all();
  }
  std::optional<AdmissionAnswer> answer() {
    std::lock_guard<std::mutex> lock(log_->mu);
    return answer_;
  }

 private:
  const std::string name_;
  AnswerLog* const log_;
  std::optional<AdmissionAnswer> answer_;  // guarded by log_->mu
};

ValidatedRequest Request(int32_t priority = 0, uint32_t prompt_ids = 10,
                         uint32_t max_new_tokens = 100) {
  smallmind::v1::GenerateRequest request;
  for (uint32_t i = 0; i < prompt_ids; ++i) request.mutable_prompt_token_ids()->add_ids(i + 1);
  request.mutable_stopping()->set_max_new_tokens(max_new_tokens);
  request.set_priority(priority);
  auto validated = Validate(request, "admission-test");
  EXPECT_TRUE(validated.ok()) << validated.status().ToString();
  return std::move(validated).value();
}

// What the workers measured: 10 prompt tokens at 1000 tok/s (10 ms) and 100 new tokens at 100
// tok/s (1000 ms), so Request() costs 1010 ms.
ServiceSample Measured() {
  ServiceSample sample;
  sample.prompt_tokens = 10;
  sample.completion_tokens = 100;
  sample.max_new_tokens = 100;
  sample.prefill_tokens_per_s = 1000;
  sample.decode_tokens_per_s = 100;
  return sample;
}

class AdmissionQueueTest : public ::testing::Test {
 protected:
  void Make(size_t max_queue, size_t slots, bool deadline_admission = true) {
    slots_ = slots;
    AdmissionOptions options;
    options.max_queue = max_queue;
    options.deadline_admission = deadline_admission;
    options.recheck = milliseconds(5);
    queue_ = std::make_unique<AdmissionQueue>(options, [this] { return slots_.load(); });
  }
  Waiter* NewWaiter(const std::string& name) {
    waiters_.push_back(std::make_unique<Waiter>(name, &log_));
    return waiters_.back().get();
  }
  Waiter* Enter(const std::string& name, const ValidatedRequest& request,
                SystemClock::time_point deadline = kNoDeadline) {
    Waiter* waiter = NewWaiter(name);
    queue_->Enter(waiter, request, deadline);
    return waiter;
  }
  // Every admitted waiter leaves, so the queue ends empty.
  void TearDown() override {
    if (!queue_) return;
    for (auto& w : waiters_) {
      const auto answer = w->answer();
      if (!answer) queue_->Withdraw(w.get());
    }
    for (auto& w : waiters_) {
      const auto answer = w->answer();
      if (answer && answer->status.ok() && !left_.count(w.get())) {
        queue_->Leave(w.get(), std::nullopt);
      }
    }
    queue_.reset();
  }
  void Leave(Waiter* waiter, std::optional<ServiceSample> served = std::nullopt) {
    left_.insert(waiter);
    queue_->Leave(waiter, served);
  }

  AnswerLog log_;
  std::atomic<size_t> slots_{1};
  std::vector<std::unique_ptr<Waiter>> waiters_;
  std::set<Waiter*> left_;
  std::unique_ptr<AdmissionQueue> queue_;
};

TEST_F(AdmissionQueueTest, AdmitsUpToTheSlotsQueuesUpToTheBoundAndRefusesOnlyTheExcess) {
  Make(/*max_queue=*/3, /*slots=*/2);
  std::vector<Waiter*> w;
  for (int i = 0; i < 7; ++i) w.push_back(Enter("r" + std::to_string(i), Request()));
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(w[i]->answer().has_value()) << i;
    EXPECT_TRUE(w[i]->answer()->status.ok()) << i;
  }
  for (int i = 2; i < 5; ++i) EXPECT_FALSE(w[i]->answer().has_value()) << i << " should wait";
  for (int i = 5; i < 7; ++i) {
    ASSERT_TRUE(w[i]->answer().has_value()) << i;
    EXPECT_EQ(w[i]->answer()->status.code(), StatusCode::kResourceExhausted) << i;
    ASSERT_TRUE(w[i]->answer()->retry_after.has_value()) << i;
    EXPECT_GE(w[i]->answer()->retry_after->count(), 1);
  }
  EXPECT_EQ(queue_->counts().waiting, 3u);
  EXPECT_EQ(queue_->counts().admitted, 2u);
  // A slot given back admits the head of the queue, and only it.
  Leave(w[0]);
  ASSERT_TRUE(w[2]->answer().has_value());
  EXPECT_TRUE(w[2]->answer()->status.ok());
  EXPECT_FALSE(w[3]->answer().has_value());
}

TEST_F(AdmissionQueueTest, HigherPriorityGoesFirstAndEqualPrioritiesKeepArrivalOrder) {
  Make(/*max_queue=*/8, /*slots=*/1);
  Waiter* running = Enter("running", Request(0));
  ASSERT_TRUE(running->answer().has_value());
  Enter("low-a", Request(0));
  Enter("high-a", Request(5));
  Enter("high-b", Request(5));
  Enter("mid", Request(1));
  Enter("low-b", Request(0));
  Enter("negative", Request(-3));
  std::vector<std::string> expected = {"running"};
  Waiter* current = running;
  for (const std::string name : {"high-a", "high-b", "mid", "low-a", "low-b", "negative"}) {
    Leave(current);  // the slot goes to the next in order, and only to it
    expected.push_back(name);
    ASSERT_EQ(log_.AdmittedNames(), expected);
    for (auto& w : waiters_) {
      if (w->answer() && w->answer()->status.ok() && !left_.count(w.get())) current = w.get();
    }
  }
}

TEST_F(AdmissionQueueTest, FullQueueGivesTheLastLowerPriorityPlaceToAHigherOne) {
  Make(/*max_queue=*/2, /*slots=*/1);
  Waiter* running = Enter("running", Request(0));
  Waiter* first = Enter("first", Request(0));
  Waiter* second = Enter("second", Request(0));
  Waiter* urgent = Enter("urgent", Request(3));
  ASSERT_TRUE(second->answer().has_value());
  EXPECT_EQ(second->answer()->status.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(second->answer()->status.message().find("higher priority"), std::string::npos);
  EXPECT_FALSE(urgent->answer().has_value());
  // An equal priority does not displace anyone: the newcomer is the excess.
  Waiter* same = Enter("same", Request(0));
  ASSERT_TRUE(same->answer().has_value());
  EXPECT_EQ(same->answer()->status.code(), StatusCode::kResourceExhausted);
  Leave(running);
  ASSERT_TRUE(urgent->answer().has_value());
  EXPECT_TRUE(urgent->answer()->status.ok());
  EXPECT_FALSE(first->answer().has_value());
}

TEST_F(AdmissionQueueTest, WithdrawnWaiterIsAnsweredCancelledAndFreesItsPlace) {
  Make(/*max_queue=*/1, /*slots=*/1);
  Enter("running", Request());
  Waiter* waiting = Enter("waiting", Request());
  queue_->Withdraw(waiting);
  ASSERT_TRUE(waiting->answer().has_value());
  EXPECT_EQ(waiting->answer()->status.code(), StatusCode::kCancelled);
  Waiter* next = Enter("next", Request());
  EXPECT_FALSE(next->answer().has_value());  // queued in the freed place, not refused
  EXPECT_EQ(queue_->counts().waiting, 1u);
}

TEST_F(AdmissionQueueTest, NoHealthyWorkerPassesRequestsStraightOnToRouting) {
  Make(/*max_queue=*/0, /*slots=*/0);
  for (int i = 0; i < 3; ++i) {
    Waiter* w = Enter("r" + std::to_string(i), Request());
    ASSERT_TRUE(w->answer().has_value());
    EXPECT_TRUE(w->answer()->status.ok());
  }
}

TEST_F(AdmissionQueueTest, MoreSlotsAdmitWaitersWithoutAnyRequestLeaving) {
  Make(/*max_queue=*/4, /*slots=*/1);
  Enter("running", Request());
  Waiter* waiting = Enter("waiting", Request());
  EXPECT_FALSE(waiting->answer().has_value());
  slots_ = 2;  // a worker became healthy
  ASSERT_TRUE(log_.WaitForCount(2));
  EXPECT_TRUE(waiting->answer()->status.ok());
}

TEST_F(AdmissionQueueTest, DeadlineAlreadyPastIsRefusedAtOnce) {
  Make(/*max_queue=*/4, /*slots=*/1);
  Waiter* late = Enter("late", Request(), SystemClock::now() - milliseconds(1));
  ASSERT_TRUE(late->answer().has_value());
  EXPECT_EQ(late->answer()->status.code(), StatusCode::kDeadlineExceeded);
}

TEST_F(AdmissionQueueTest, DeadlinePassingWhileWaitingEndsDeadlineExceeded) {
  Make(/*max_queue=*/4, /*slots=*/1);
  Enter("running", Request());
  Waiter* waiting = Enter("waiting", Request(), SystemClock::now() + milliseconds(20));
  ASSERT_TRUE(log_.WaitForCount(2));
  EXPECT_EQ(waiting->answer()->status.code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(waiting->answer()->status.message().find("waited"), std::string::npos);
  EXPECT_EQ(queue_->counts().waiting, 0u);
}

TEST_F(AdmissionQueueTest, DeadlineTheQueueAheadMakesUnreachableIsRefusedEarly) {
  Make(/*max_queue=*/4, /*slots=*/1);
  Waiter* running = Enter("running", Request());
  // Nothing measured yet: no estimate, no early refusal.
  Waiter* unmeasured = Enter("unmeasured", Request(), SystemClock::now() + milliseconds(1500));
  EXPECT_FALSE(unmeasured->answer().has_value());
  queue_->Withdraw(unmeasured);
  Leave(running, Measured());  // each Request() now costs about 1010 ms
  Enter("holder", Request());  // takes the slot
  Waiter* ahead = Enter("ahead", Request());
  EXPECT_FALSE(ahead->answer().has_value());
  // "ahead" (1010 ms) then itself (1010 ms) cannot fit in 1500 ms: refused at once.
  Waiter* tight = Enter("tight", Request(), SystemClock::now() + milliseconds(1500));
  ASSERT_TRUE(tight->answer().has_value());
  EXPECT_EQ(tight->answer()->status.code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(tight->answer()->status.message().find("refused early"), std::string::npos)
      << tight->answer()->status.message();
  // With room for both it waits, and so does a higher priority, which nothing waits ahead of.
  Waiter* roomy = Enter("roomy", Request(), SystemClock::now() + milliseconds(60000));
  EXPECT_FALSE(roomy->answer().has_value());
  Waiter* urgent = Enter("urgent", Request(9), SystemClock::now() + milliseconds(1500));
  EXPECT_FALSE(urgent->answer().has_value());
}

TEST_F(AdmissionQueueTest, DeadlineAdmissionOffNeverRefusesEarly) {
  Make(/*max_queue=*/4, /*slots=*/1, /*deadline_admission=*/false);
  Waiter* running = Enter("running", Request());
  Leave(running, Measured());
  Enter("holder", Request());
  Enter("ahead", Request());
  Waiter* tight = Enter("tight", Request(), SystemClock::now() + milliseconds(1500));
  EXPECT_FALSE(tight->answer().has_value());
}

TEST_F(AdmissionQueueTest, RetryHintIsTheMeasuredTimeTheQueueAheadTakesToDrain) {
  Make(/*max_queue=*/2, /*slots=*/1);
  Waiter* running = Enter("running", Request());
  Leave(running, Measured());
  Enter("holder", Request());
  Enter("a", Request());
  Enter("b", Request());
  Waiter* refused = Enter("refused", Request());
  ASSERT_TRUE(refused->answer().has_value());
  EXPECT_EQ(refused->answer()->status.code(), StatusCode::kResourceExhausted);
  ASSERT_TRUE(refused->answer()->retry_after.has_value());
  EXPECT_EQ(refused->answer()->retry_after->count(), 2 * 1010);  // "a" and "b", one slot
}

// A text prompt far beyond the context counts as a context's prefill: the worker refuses it
// before tokenizing (INVALID_ARGUMENT, final), so the queue must not refuse it first as
// DEADLINE_EXCEEDED on an estimate of a 7 MB prompt's prefill (250 s at the measured rate once
// made the four big prompts of gateway_big_prompt_test fail that way).
TEST_F(AdmissionQueueTest, APromptLongerThanTheContextIsEstimatedAsTheContextsPrefill) {
  Make(/*max_queue=*/4, /*slots=*/1);
  Waiter* running = Enter("running", Request());
  Leave(running, Measured());  // 1000 prompt tok/s; text prompts at 0.25 tokens a byte
  smallmind::v1::GenerateRequest big;
  big.set_prompt(std::string(7u << 20, 'a'));
  big.mutable_stopping()->set_max_new_tokens(4);
  auto validated = Validate(big, "admission-test");
  ASSERT_TRUE(validated.ok()) << validated.status().ToString();
  // Uncapped: 1.8 M tokens at 1000 tok/s, about 1835 s, beyond a 120 s deadline.
  Waiter* uncapped = Enter("uncapped", *validated, SystemClock::now() + milliseconds(120000));
  ASSERT_TRUE(uncapped->answer().has_value());
  EXPECT_EQ(uncapped->answer()->status.code(), StatusCode::kDeadlineExceeded);
  // With the context known (512 tokens: 0.5 s), it is admitted and reaches the worker's refusal.
  queue_->SetContextLength(512);
  Waiter* capped = Enter("capped", *validated, SystemClock::now() + milliseconds(120000));
  ASSERT_TRUE(capped->answer().has_value());
  EXPECT_TRUE(capped->answer()->status.ok()) << capped->answer()->status.ToString();
}

}  // namespace
}  // namespace smallmind::gateway
