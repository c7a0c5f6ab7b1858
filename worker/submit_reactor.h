// SubmitReactor: one worker.proto Submit stream. Its request is built (the prompt tokenized) on a
// RequestLanes thread, never on gRPC's; it hands the Sequence to the scheduler and is that
// sequence's SequenceSink: the output pump thread coalesces tokens into one pending message and
// gRPC threads write with one write in flight; the two messages are reused (pending and in flight
// swap). Deleted by the last of two ends: gRPC's OnDone (which comes only after Finish) and the
// return of OnFinish (the pump's last call; the build job calls it itself when the sequence never
// reaches the scheduler: a bad request, or a cancel before it was built). OnFinish may start the
// last write, whose completion may Finish the call and run OnDone on a gRPC thread while the pump
// thread is still inside OnFinish: the object must outlive both. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include <grpcpp/grpcpp.h>

#include "shared/status.h"
#include "smallmind/v1/worker.grpc.pb.h"
#include "worker/loader/model_loader.h"
#include "worker/request_lanes.h"
#include "worker/run_facts.h"
#include "worker/sched/command_queue.h"
#include "worker/sequence_sink.h"

namespace smallmind::worker {

class SubmitReactor final : public grpc::ServerWriteReactor<v1::SubmitResponse>,
                            public SequenceSink {
 public:
  // `facts` (the worker's, for determinism receipts), `model` and `lanes` must outlive the
  // reactor; `request` is gRPC's, valid until OnDone.
  SubmitReactor(const v1::SubmitRequest& request, const LoadedModel& model, const RunFacts& facts,
                CommandQueue* commands, RequestLanes* lanes, uint64_t sequence_id);

  // SequenceSink (output pump thread).
  void OnTokens(const TokenEvent& event) override;
  void OnFinish(const FinishEvent& event) override;

  // gRPC reactions.
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  enum class Action { kNone, kWrite, kFinish };
  // The lane job: builds the sequence and submits it, or finishes the call with why not.
  void Build(const v1::SubmitRequest& request, const LoadedModel& model);
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
  // OnDone's and the build job's, which passes to the scheduler's OnFinish once submitted.
  std::atomic<int> refs_{2};
};

}  // namespace smallmind::worker
