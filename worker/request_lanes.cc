#include "worker/request_lanes.h"

#include <utility>

namespace smallmind::worker {

RequestLanes::RequestLanes() {
  small_.thread = std::thread([this] { Run(&small_); });
  large_.thread = std::thread([this] { Run(&large_); });
}

RequestLanes::~RequestLanes() { Stop(); }

void RequestLanes::Post(size_t input_bytes, std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_) {
      (input_bytes >= kLargeBytes ? large_ : small_).jobs.push_back(std::move(job));
      wake_.notify_all();
      return;
    }
  }
  job();
}

void RequestLanes::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (small_.thread.joinable()) small_.thread.join();
  if (large_.thread.joinable()) large_.thread.join();
}

void RequestLanes::Run(Lane* lane) {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || !lane->jobs.empty(); });
    if (lane->jobs.empty()) return;  // stopping, and nothing left
    std::function<void()> job = std::move(lane->jobs.front());
    lane->jobs.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
}

}  // namespace smallmind::worker
