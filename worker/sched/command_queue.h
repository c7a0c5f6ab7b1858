// CommandQueue: the one MPSC queue through which service threads talk to the scheduler thread
// (submit, cancel, stats snapshot). All of the worker's scheduler-side locking lives here.
// Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <variant>
#include <vector>

#include "worker/sched/sequence.h"

namespace smallmind::worker {

struct SubmitCommand {
  std::unique_ptr<Sequence> sequence;
};
struct CancelCommand {
  uint64_t sequence_id;
};
using Command = std::variant<SubmitCommand, CancelCommand>;

class CommandQueue {
 public:
  void Push(Command command);
  // Pushes every command at once: the consumer drains all of them in the same round (the inputs
  // of one embedding request reach the same scheduling decision).
  void PushAll(std::vector<Command> commands);
  // Moves every queued command into `out`. When `wait` and the queue is empty, blocks until a
  // command arrives or Close() is called.
  void DrainInto(std::deque<Command>* out, bool wait);
  // Wakes the consumer for good; later pushes are still accepted and drained.
  void Close();
  bool closed() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Command> commands_;
  bool closed_ = false;
};

}  // namespace smallmind::worker
