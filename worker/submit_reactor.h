// SubmitReactor: one worker.proto Submit stream. It hands its Sequence to the scheduler and is that
// sequence's SequenceSink: the scheduler thread queues tokens into a bounded, coalescing outbox and
// gRPC threads drain it with one write in flight. Deletes itself in OnDone, which gRPC calls only
// after Finish, which it calls only after the scheduler's OnFinish. Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>

#include <grpcpp/grpcpp.h>

#include "smallmind/v1/worker.grpc.pb.h"
#include "worker/model/model_loader.h"
#include "worker/sched/command_queue.h"
#include "worker/sched/sequence_sink.h"

namespace smallmind::worker {

class SubmitReactor final : public grpc::ServerWriteReactor<v1::SubmitResponse>,
                            public SequenceSink {
 public:
  SubmitReactor(const v1::SubmitRequest& request, const LoadedModel& model, CommandQueue* commands,
                uint64_t sequence_id);

  // SequenceSink (scheduler thread).
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
  v1::GenerateResponse* OpenMessageLocked();

  CommandQueue* commands_;
  const uint64_t sequence_id_;
  std::mutex mu_;
  std::deque<v1::SubmitResponse> outbox_;  // pending; tokens coalesce into the back one
  v1::SubmitResponse in_flight_;           // the one message being written
  bool writing_ = false;
  bool scheduler_done_ = false;  // OnFinish received (or the sequence never reached it)
  bool final_queued_ = false;    // the back of outbox_ carries the finish fields
  bool broken_ = false;          // a write failed: the client is gone
  bool finish_called_ = false;
  grpc::Status final_status_;
};

}  // namespace smallmind::worker
