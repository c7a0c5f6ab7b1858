#include "gateway/grpc/cancellable_reactor.h"

#include <utility>

namespace smallmind::gateway {

void CancellableReactor::SetCancel(std::function<void()> cancel) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!cancelled_) {
      cancel_ = std::move(cancel);
      return;
    }
  }
  cancel();  // the client left before the work started
}

void CancellableReactor::OnCancel() {
  std::function<void()> cancel;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    cancel.swap(cancel_);
  }
  if (cancel) cancel();
}

}  // namespace smallmind::gateway
