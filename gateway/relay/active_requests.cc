#include "gateway/relay/active_requests.h"

#include "shared/check.h"

namespace smallmind::gateway {

void ActiveRequests::Add() {
  std::lock_guard<std::mutex> lock(mu_);
  ++count_;
}

void ActiveRequests::Remove() {
  std::lock_guard<std::mutex> lock(mu_);
  SM_CHECK(count_ > 0) << "ActiveRequests::Remove without Add";
  if (--count_ == 0) zero_.notify_all();
}

size_t ActiveRequests::count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return count_;
}

bool ActiveRequests::WaitUntilZero(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return zero_.wait_for(lock, timeout, [this] { return count_ == 0; });
}

}  // namespace smallmind::gateway
