// Where a request waits for its turn before a worker is picked: the seam for issue 10's bounded
// queue (RESOURCE_EXHAUSTED beyond it), priority order and deadline-aware refusal. Called by
// RequestRelay from any thread; implementations are thread-safe.
#pragma once

#include <chrono>

#include "gateway/validate.h"
#include "shared/status.h"

namespace smallmind::gateway {

// The request's side of admission (RequestRelay implements it).
class AdmissionWaiter {
 public:
  // OK: the request may go to a worker and holds its place until Admission::Leave. Otherwise the
  // refusal the client receives (RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED, CANCELLED after Withdraw).
  virtual void OnAdmitted(shared::Status status) = 0;

 protected:
  ~AdmissionWaiter() = default;
};

class Admission {
 public:
  virtual ~Admission() = default;
  // Calls waiter->OnAdmitted exactly once: inline, or later from any thread. `request` and
  // `deadline` (system_clock max = none) are valid only during the call.
  virtual void Enter(AdmissionWaiter* waiter, const ValidatedRequest& request,
                     std::chrono::system_clock::time_point deadline) = 0;
  // The waiter gave up (its client cancelled). If it is still waiting, OnAdmitted follows soon
  // with CANCELLED; if it was admitted already, Leave follows.
  virtual void Withdraw(AdmissionWaiter* waiter) = 0;
  // An admitted request's worker work is over; its place goes to the next waiter.
  virtual void Leave(AdmissionWaiter* waiter) = 0;
};

// Admits every request at once (no gateway queue yet: workers refuse with RESOURCE_EXHAUSTED
// when their own queues are full, and the relay retries elsewhere).
class OpenAdmission final : public Admission {
 public:
  void Enter(AdmissionWaiter* waiter, const ValidatedRequest&,
             std::chrono::system_clock::time_point) override {
    waiter->OnAdmitted(shared::Status::Ok());
  }
  void Withdraw(AdmissionWaiter*) override {}
  void Leave(AdmissionWaiter*) override {}
};

}  // namespace smallmind::gateway
