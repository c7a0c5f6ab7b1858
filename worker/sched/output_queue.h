// OutputQueue: carries the scheduler's StepOutput from the scheduler thread to the output pump
// (gRPC side), once per step. Three buffers take turns: the scheduler fills its own, Publish()
// swaps it with the queue's empty one (or appends to the pending one when the pump has not taken
// it yet), and Take() swaps the pending one into the pump's, so the scheduler thread never waits
// for the pump and nothing is allocated once the buffers have grown. Together with CommandQueue
// this file holds the only locks the scheduler thread takes (STYLE §10). Thread-safe.
#pragma once

#include <condition_variable>
#include <mutex>

#include "worker/sched/step_output.h"

namespace smallmind::worker {

class OutputQueue {
 public:
  // Scheduler thread: queues `out`'s events after those already pending and leaves `out` empty
  // (with a spare buffer's capacity). Does nothing for an empty `out`.
  void Publish(StepOutput* out);
  // Pump thread: waits for published events (or Close), then moves all of them into `out`,
  // replacing its contents. Returns false once the queue is closed and nothing is pending.
  bool Take(StepOutput* out);
  // Like Take, but returns false at once when nothing is pending.
  bool TryTake(StepOutput* out);
  // No more Publish calls will come: Take returns what is pending, then false.
  void Close();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  StepOutput pending_;  // published, not yet taken
  bool closed_ = false;
  bool reader_waiting_ = false;  // a Take is blocked: Publish must wake it
};

}  // namespace smallmind::worker
