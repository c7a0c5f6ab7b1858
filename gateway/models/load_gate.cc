#include "gateway/models/load_gate.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "shared/check.h"

namespace smallmind::gateway {

LoadGate::LoadGate(std::unique_ptr<Admission> inner, std::function<void()> wanted)
    : inner_(std::move(inner)), wanted_(std::move(wanted)) {}

LoadGate::~LoadGate() {
  std::lock_guard<std::mutex> lock(mu_);
  SM_CHECK(waiting_.empty() && watching_.empty())
      << "a LoadGate destroyed with " << waiting_.size() + watching_.size()
      << " request(s) waiting";
}

void LoadGate::Enter(AdmissionWaiter* waiter, const ValidatedRequest& request,
                     std::chrono::system_clock::time_point deadline) {
  bool wait = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    wait = !open_;
    if (wait) waiting_.push_back({waiter, request, deadline});
  }
  if (!wait) return inner_->Enter(waiter, request, deadline);
  // An Open() since the push takes it on; else the loader thread hears of it.
  if (wanted_) wanted_();
}

void LoadGate::WhenOpen(Ready ready, std::chrono::system_clock::time_point deadline) {
  bool wait = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    wait = !open_;
    if (wait) watching_.push_back({std::move(ready), deadline});
  }
  if (!wait) return ready(shared::Status::Ok());
  if (wanted_) wanted_();
}

void LoadGate::Withdraw(AdmissionWaiter* waiter) {
  std::vector<Waiting> gone = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    return TakeLocked([waiter](const Waiting& w) { return w.waiter == waiter; });
  }();
  if (gone.empty()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (std::find(handing_.begin(), handing_.end(), waiter) != handing_.end()) {
        withdrawn_.push_back(waiter);  // Open() forwards it right after the waiter's Enter
        return;
      }
    }
    return inner_->Withdraw(waiter);
  }
  waiter->OnAdmitted(
      {shared::Status(shared::StatusCode::kCancelled, "cancelled while its model was loading"),
       std::nullopt});
}

void LoadGate::Leave(AdmissionWaiter* waiter, const std::optional<ServiceSample>& served) {
  inner_->Leave(waiter, served);
}

void LoadGate::Open() {
  std::vector<Waiting> ready;
  std::vector<Watching> watchers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    ready.swap(waiting_);
    watchers.swap(watching_);
    for (const Waiting& w : ready) handing_.push_back(w.waiter);
  }
  for (Watching& w : watchers) w.ready(shared::Status::Ok());
  for (Waiting& w : ready) {
    inner_->Enter(w.waiter, w.request, w.deadline);
    bool withdrawn = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      std::erase(handing_, w.waiter);
      withdrawn = std::erase(withdrawn_, w.waiter) > 0;
    }
    if (withdrawn) inner_->Withdraw(w.waiter);
  }
}

void LoadGate::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  open_ = false;
}

void LoadGate::Fail(const shared::Status& why) {
  std::vector<Waiting> failed;
  std::vector<Watching> watchers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    failed.swap(waiting_);
    watchers.swap(watching_);
  }
  for (Waiting& w : failed) {
    w.waiter->OnAdmitted({shared::Unavailable(why.message()), std::nullopt});
  }
  for (Watching& w : watchers) w.ready(shared::Unavailable(why.message()));
}

void LoadGate::Expire(std::chrono::system_clock::time_point now) {
  std::vector<Waiting> late;
  std::vector<Watching> late_watchers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    late = TakeLocked([now](const Waiting& w) { return w.deadline <= now; });
    auto keep = std::stable_partition(watching_.begin(), watching_.end(),
                                      [now](const Watching& w) { return w.deadline > now; });
    std::move(keep, watching_.end(), std::back_inserter(late_watchers));
    watching_.erase(keep, watching_.end());
  }
  const shared::Status passed(shared::StatusCode::kDeadlineExceeded,
                              "the deadline passed while its model was loading");
  for (Waiting& w : late) w.waiter->OnAdmitted({passed, std::nullopt});
  for (Watching& w : late_watchers) w.ready(passed);
}

bool LoadGate::open() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_;
}

size_t LoadGate::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return waiting_.size() + watching_.size();
}

template <typename Pick>
std::vector<LoadGate::Waiting> LoadGate::TakeLocked(Pick pick) {
  std::vector<Waiting> taken;
  auto keep = std::stable_partition(waiting_.begin(), waiting_.end(),
                                    [&](const Waiting& w) { return !pick(w); });
  std::move(keep, waiting_.end(), std::back_inserter(taken));
  waiting_.erase(keep, waiting_.end());
  return taken;
}

}  // namespace smallmind::gateway
