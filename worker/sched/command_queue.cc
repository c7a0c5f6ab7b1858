#include "worker/sched/command_queue.h"

namespace smallmind::worker {

void CommandQueue::Push(Command command) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    commands_.push_back(std::move(command));
  }
  cv_.notify_one();
}

void CommandQueue::PushAll(std::vector<Command> commands) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (Command& c : commands) commands_.push_back(std::move(c));
  }
  cv_.notify_one();
}

void CommandQueue::DrainInto(std::deque<Command>* out, bool wait) {
  std::unique_lock<std::mutex> lock(mu_);
  if (wait) cv_.wait(lock, [this] { return closed_ || !commands_.empty(); });
  while (!commands_.empty()) {
    out->push_back(std::move(commands_.front()));
    commands_.pop_front();
  }
}

void CommandQueue::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

bool CommandQueue::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

}  // namespace smallmind::worker
