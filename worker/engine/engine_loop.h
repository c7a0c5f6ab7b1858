// EngineLoop: the engine's step loop, apart from the process wrapper: drain commands -> schedule
// (preempting while the batch does not fit) -> engine step -> sample -> update -> publish the
// step's output.
// Run() is the body of the scheduler thread, the only thread that touches the scheduler, the
// engine and the block pool; it talks to other threads only through the command and output queues.
// Lives in engine/ because it drives both the scheduler (the layer below) and the engine.
#pragma once

#include <deque>
#include <vector>

#include "worker/engine/draft_model.h"
#include "worker/engine/engine.h"
#include "worker/sched/command_queue.h"
#include "worker/sched/output_queue.h"
#include "worker/sched/scheduler.h"

namespace smallmind::worker {

class EngineLoop {
 public:
  // `draft` (may be null): the draft model, which proposes drafts before each step.
  EngineLoop(Scheduler* scheduler, Engine* engine, CommandQueue* commands, OutputQueue* outputs,
             SchedulerStats* stats, DraftModel* draft = nullptr);

  // Steps until the command queue is closed; then cancels what is left, publishes those finishes
  // and closes the output queue.
  void Run();
  // One iteration without blocking (commands, step, publish); returns false when there was
  // nothing to run. For tests.
  bool RunOnce();

 private:
  void ApplyCommands();
  // Schedule (preempting until the batch fits), run the engine, update; false when idle.
  bool Step();
  void Publish();

  Scheduler* scheduler_;
  Engine* engine_;
  CommandQueue* commands_;
  OutputQueue* outputs_;
  SchedulerStats* stats_;
  DraftModel* draft_;
  std::vector<DraftRequest> draft_requests_;  // reused every step
  std::deque<Command> drained_;
  StepShape shape_;  // reused every step
  StepPlan plan_;
};

}  // namespace smallmind::worker
