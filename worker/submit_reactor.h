// SubmitReactor: one worker.proto Submit stream. It hands its Sequence to the scheduler and is that
// sequence's SequenceSink: the output pump thread coalesces tokens into one pending message and
// gRPC threads write with one write in flight; the two messages are reused (pending and in flight
// swap). Deleted by the last of two ends: gRPC's OnDone (which comes only after Finish) and the
// return of OnFinish (the pump's last call; none comes when the sequence never reached the
// scheduler). OnFinish may start the last write, whose completion may Finish the call and run
// OnDone on a gRPC thread while the pump thread is still inside OnFinish: the object must outlive
// both. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include <grpcpp/grpcpp.h>

#include "shared/status.h"
#include "smallmind/v1/worker.grpc.pb.h"
#include "worker/loader/model_loader.h"
#include "worker/run_facts.h"
#include "worker/sched/command_queue.h"
#include "worker/sequence_sink.h"

namespace smallmind::worker {

class SubmitReactor final : public grpc::ServerWriteReactor<v1::SubmitResponse>,
                            public SequenceSink {
 public:
  // `facts` (the worker's, for determinism receipts) must outlive the reactor.
  SubmitReactor(const v1::SubmitRequest& request, const LoadedModel& model, const RunFacts& facts,
                CommandQueue* commands, uint64_t sequence_id);

  // SequenceSink (output pump thread).
  void OnTokens(const TokenEvent& event) override;
  void OnFinish(const FinishEvent& event) override;

  // gRPC reactions.
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  enum class Action { kNone, kWrite, kFinish };
  // Decides under mu_ what to do next; the caller acts after unlocking.
  Action NextActionLocked();
  void Act(Action action);
  // Drops one of the two ends' references; the last one deletes this.
  void Unref();

  const RunFacts& facts_;
  CommandQueue* commands_;
  const uint64_t sequence_id_;
  std::mutex mu_;
  v1::SubmitResponse pending_;    // tokens coalesce here until the writer is free
  v1::SubmitResponse in_flight_;  // the one message being written
  bool has_pending_ = false;
  bool writing_ = false;
  bool scheduler_done_ = false;  // finish delivered (or the sequence never reached the scheduler)
  bool broken_ = false;          // a write failed or the call was cancelled: the client is gone
  bool finish_called_ = false;
  shared::Status final_status_;
  // OnDone's and, while the sequence is with the scheduler, OnFinish's.
  std::atomic<int> refs_{1};
};

}  // namespace smallmind::worker
