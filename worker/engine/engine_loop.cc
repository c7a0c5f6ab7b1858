#include "worker/engine/engine_loop.h"

namespace smallmind::worker {

EngineLoop::EngineLoop(Scheduler* scheduler, Engine* engine, CommandQueue* commands,
                       OutputQueue* outputs, SchedulerStats* stats, DraftModel* draft)
    : scheduler_(scheduler),
      engine_(engine),
      commands_(commands),
      outputs_(outputs),
      stats_(stats),
      draft_(draft) {
  draft_requests_.reserve(engine->options().max_seqs);  // one per sequence of a step
}

void EngineLoop::Run() {
  while (true) {
    commands_->DrainInto(&drained_, /*wait=*/scheduler_->idle());
    ApplyCommands();
    if (commands_->closed()) break;
    Step();
    Publish();
  }
  scheduler_->CancelAll();
  Publish();
  scheduler_->PublishStats(stats_);
  outputs_->Close();
}

bool EngineLoop::RunOnce() {
  commands_->DrainInto(&drained_, /*wait=*/false);
  ApplyCommands();
  bool ran = Step();
  Publish();
  return ran;
}

bool EngineLoop::Step() {
  if (draft_ != nullptr) {
    scheduler_->DraftCandidates(&draft_requests_);
    if (!draft_requests_.empty()) draft_->Propose(draft_requests_);
  }
  while (!scheduler_->Schedule(&shape_)) {
    scheduler_->PreemptNewest();
    stats_->Add(shared::WorkerStat::kPreemptions, 1);
  }
  if (shape_.entries.empty()) {
    scheduler_->PublishStats(stats_);
    return false;
  }
  scheduler_->Apply(shape_, &plan_);
  engine_->Step(plan_);
  SampleAndUpdate(
      scheduler_, LogitsAtFn([this](int i, int j) { return engine_->Logits(i, j); }),
      [this](int n, const std::function<void(int)>& body) { engine_->ForEach(n, body); },
      [this](int row) { return engine_->Embedding(row); });
  scheduler_->PublishStats(stats_);
  return true;
}

// Once per iteration, after the commands and the step, so events leave in the order they
// happened and before the thread may block waiting for commands.
void EngineLoop::Publish() { outputs_->Publish(scheduler_->mutable_output()); }

void EngineLoop::ApplyCommands() {
  for (Command& command : drained_) {
    if (auto* submit = std::get_if<SubmitCommand>(&command)) {
      scheduler_->Add(std::move(submit->sequence));
    } else {
      scheduler_->Cancel(std::get<CancelCommand>(command).sequence_id);
    }
  }
  drained_.clear();
}

}  // namespace smallmind::worker
