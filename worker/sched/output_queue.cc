#include "worker/sched/output_queue.h"

namespace smallmind::worker {

void OutputQueue::Publish(StepOutput* out) {
  if (out->empty()) return;
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pending_.empty()) {
      pending_.Swap(*out);  // `out` gets the empty spare: no copy, no allocation
    } else {
      pending_.Append(*out);  // the pump is behind: coalesce, keeping the order
      out->Clear();
    }
    wake = reader_waiting_;
  }
  if (wake) cv_.notify_one();
}

bool OutputQueue::Take(StepOutput* out) {
  out->Clear();  // outside the lock: this buffer becomes the next spare
  std::unique_lock<std::mutex> lock(mu_);
  reader_waiting_ = true;
  cv_.wait(lock, [this] { return closed_ || !pending_.empty(); });
  reader_waiting_ = false;
  if (pending_.empty()) return false;
  pending_.Swap(*out);
  return true;
}

bool OutputQueue::TryTake(StepOutput* out) {
  out->Clear();
  std::lock_guard<std::mutex> lock(mu_);
  if (pending_.empty()) return false;
  pending_.Swap(*out);
  return true;
}

void OutputQueue::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

}  // namespace smallmind::worker
