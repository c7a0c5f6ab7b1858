// Counts the Generate streams alive in the gateway so that shutdown can wait for them to drain.
// Each reactor adds itself when built and removes itself when deleted. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace smallmind::gateway {

class ActiveRequests {
 public:
  void Add();
  void Remove();
  size_t count() const;
  // True when the count reached zero within `timeout`.
  bool WaitUntilZero(std::chrono::milliseconds timeout);

 private:
  mutable std::mutex mu_;
  std::condition_variable zero_;
  size_t count_ = 0;  // guarded by mu_
};

}  // namespace smallmind::gateway
