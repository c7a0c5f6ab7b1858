// OutputPump: the gRPC side's end of the OutputQueue. Its thread takes each published StepOutput
// and delivers the events, in order, to their sequences' sinks (the Submit reactors, which build
// the messages and write them), so the scheduler thread never touches gRPC, protobuf or a reactor.
// Start/Join from one controlling thread; the pump thread is the only caller of the sinks.
#pragma once

#include <thread>

#include "worker/sched/output_queue.h"
#include "worker/sched/step_output.h"

namespace smallmind::worker {

// Delivers every event of `output` to its sink (events without a sink are skipped).
void DeliverOutput(const StepOutput& output);

class OutputPump {
 public:
  explicit OutputPump(OutputQueue* queue);
  ~OutputPump();  // joins

  void Start();
  // Returns once the queue was closed and everything published was delivered.
  void Join();

 private:
  void Run();

  OutputQueue* queue_;
  StepOutput taken_;  // the pump's buffer, reused
  std::thread thread_;
};

}  // namespace smallmind::worker
