#include "worker/output_pump.h"

#include "worker/sequence_sink.h"

namespace smallmind::worker {

void DeliverOutput(const StepOutput& output) {
  for (const OutputEvent& e : output.events()) {
    if (e.sink == nullptr) continue;
    if (e.finished) {
      // The sink may finish its stream and be deleted inside this call: nothing after it may
      // touch `e.sink`, and no later event names it.
      e.sink->OnFinish(e.finish);
    } else {
      e.sink->OnTokens({output.token_ids(e), output.text(e), output.logprobs(e),
                        static_cast<int>(e.context_shifts)});
    }
  }
}

OutputPump::OutputPump(OutputQueue* queue) : queue_(queue) {}

OutputPump::~OutputPump() { Join(); }

void OutputPump::Start() {
  thread_ = std::thread([this] { Run(); });
}

void OutputPump::Join() {
  if (thread_.joinable()) thread_.join();
}

void OutputPump::Run() {
  while (queue_->Take(&taken_)) DeliverOutput(taken_);
}

}  // namespace smallmind::worker
