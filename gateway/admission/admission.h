// Where a request waits for its turn before a worker is picked: the interface AdmissionQueue
// (bounded queue, priority order, deadline-aware refusal: issue 10) implements. Called by
// RequestRelay from any thread; implementations are thread-safe.
#pragma once

#include <chrono>
#include <optional>

#include "gateway/admission/service_estimate.h"
#include "gateway/admission/validate.h"
#include "shared/status.h"

namespace smallmind::gateway {

// Admission's answer to one request.
struct AdmissionAnswer {
  // OK: the request may go to a worker and holds its place until Admission::Leave. Otherwise the
  // refusal the client receives (RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED, CANCELLED after Withdraw).
  shared::Status status;
  // With RESOURCE_EXHAUSTED: when a retry is likely to find room (gRPC trailing metadata
  // `retry-after-ms`; HTTP `Retry-After`).
  std::optional<std::chrono::milliseconds> retry_after;
};

// The request's side of admission (RequestRelay implements it).
class AdmissionWaiter {
 public:
  virtual void OnAdmitted(AdmissionAnswer answer) = 0;

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
  // An admitted request's worker work is over; its place goes to the next waiter. `served` is what
  // its last message said about the worker's speed, when it finished normally.
  virtual void Leave(AdmissionWaiter* waiter, const std::optional<ServiceSample>& served) = 0;
};

// Admits every request at once (workers refuse with RESOURCE_EXHAUSTED when their own queues are
// full, and the relay retries elsewhere). The gateway uses AdmissionQueue; tests use this.
class OpenAdmission final : public Admission {
 public:
  void Enter(AdmissionWaiter* waiter, const ValidatedRequest&,
             std::chrono::system_clock::time_point) override {
    waiter->OnAdmitted({});
  }
  void Withdraw(AdmissionWaiter*) override {}
  void Leave(AdmissionWaiter*, const std::optional<ServiceSample>&) override {}
};

}  // namespace smallmind::gateway
