// EngineLoop: the engine's step loop, apart from the process wrapper: drain commands -> schedule
// (preempting while the batch does not fit) -> engine step -> update. Run() is the body of the
// scheduler thread, the only thread that touches the scheduler, the engine and the block pool.
// Lives in engine/ because it drives both the scheduler (below it) and the engine.
#pragma once

#include <deque>

#include "worker/engine/engine.h"
#include "worker/sched/command_queue.h"
#include "worker/sched/scheduler.h"

namespace smallmind::worker {

class EngineLoop {
 public:
  EngineLoop(Scheduler* scheduler, Engine* engine, CommandQueue* commands, SchedulerStats* stats);

  // Steps until the command queue is closed; then cancels what is left and returns.
  void Run();
  // One iteration without blocking; returns false when there was nothing to run. For tests.
  bool RunOnce();

 private:
  void ApplyCommands();
  // Schedule (preempting until the batch fits), run the engine, update; false when idle.
  bool Step();

  Scheduler* scheduler_;
  Engine* engine_;
  CommandQueue* commands_;
  SchedulerStats* stats_;
  std::deque<Command> drained_;
  StepShape shape_;  // reused every step
  StepPlan plan_;
};

}  // namespace smallmind::worker
