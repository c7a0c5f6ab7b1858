// LoadGate: the admission of one catalogued model (issue 45), in front of its AdmissionQueue.
// While the model is loaded the gate is open and passes every call straight on; while it is
// unloaded or loading, requests wait here (bounded by their deadlines) and the first one asks for
// the load; a load that fails answers the waiting ones UNAVAILABLE with its reason. Calls that need
// the loaded model but no admission (Tokenize, a chat template) wait with WhenOpen. Opened, closed
// and failed by ModelResidency's loader thread; Enter/Withdraw/Leave/WhenOpen come from any
// thread. Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "gateway/admission/admission.h"
#include "shared/status.h"

namespace smallmind::gateway {

class LoadGate final : public Admission {
 public:
  // `inner` admits once the model is loaded; `wanted` is called (outside the gate's lock, on the
  // caller's thread) when a request starts waiting, to ask for the load. It must not block.
  LoadGate(std::unique_ptr<Admission> inner, std::function<void()> wanted);
  ~LoadGate() override;

  void Enter(AdmissionWaiter* waiter, const ValidatedRequest& request,
             std::chrono::system_clock::time_point deadline) override;
  void Withdraw(AdmissionWaiter* waiter) override;
  void Leave(AdmissionWaiter* waiter, const std::optional<ServiceSample>& served) override;

  // `ready` runs once: OK when the model is loaded (inline when it is now), UNAVAILABLE with the
  // reason when its load fails, DEADLINE_EXCEEDED once `deadline` passed (at the next Expire);
  // inline or from the thread that opens, fails or expires the gate. Asks for the load as Enter
  // does, and counts in waiting() meanwhile (the model is busy). `ready` must not block.
  using Ready = std::function<void(const shared::Status&)>;
  void WhenOpen(Ready ready, std::chrono::system_clock::time_point deadline);

  // The model is up: the waiting requests go on to `inner`, in arrival order, and so do new ones.
  void Open();
  // The model is going down: new requests wait (and ask for a load) from now on.
  void Close();
  // The load failed: every waiting request gets UNAVAILABLE "`model` could not be loaded: why".
  void Fail(const shared::Status& why);
  // Waiting requests (and WhenOpen calls) whose deadline is at or before `now` get
  // DEADLINE_EXCEEDED.
  void Expire(std::chrono::system_clock::time_point now);

  bool open() const;
  // Requests and WhenOpen calls waiting for the load.
  size_t waiting() const;
  Admission& inner() { return *inner_; }

 private:
  struct Waiting {
    AdmissionWaiter* waiter = nullptr;
    ValidatedRequest request;
    std::chrono::system_clock::time_point deadline;
  };
  struct Watching {
    Ready ready;
    std::chrono::system_clock::time_point deadline;
  };
  // Takes out the waiting requests `pick` selects, in order.
  template <typename Pick>
  std::vector<Waiting> TakeLocked(Pick pick);

  const std::unique_ptr<Admission> inner_;
  const std::function<void()> wanted_;
  mutable std::mutex mu_;
  bool open_ = false;               // guarded by mu_
  std::vector<Waiting> waiting_;    // guarded by mu_; arrival order
  std::vector<Watching> watching_;  // guarded by mu_: WhenOpen calls waiting
  // Guarded by mu_: waiters Open() is handing to `inner` now, and those of them withdrawn
  // meanwhile (their Withdraw goes to `inner` once their Enter did).
  std::vector<AdmissionWaiter*> handing_;
  std::vector<AdmissionWaiter*> withdrawn_;
};

}  // namespace smallmind::gateway
