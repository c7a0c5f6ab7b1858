// EmbedReactor: the reactor of one Embed call on the worker. Its OnCancel (the gateway cancelled
// the call: its client left or its deadline passed) pushes a CancelCommand for each of the call's
// sequences, so that they leave the batch and free their KV pages within a step, as a Generate
// stream's cancel does; the EmbedJob then finishes the call CANCELLED. gRPC calls OnCancel and
// OnDone; PushSequences comes from a request lane and Finish from the output pump. Thread-safe;
// deletes itself in OnDone.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "worker/sched/command_queue.h"

namespace smallmind::worker {

class EmbedReactor final : public grpc::ServerUnaryReactor {
 public:
  explicit EmbedReactor(CommandQueue* commands) : commands_(commands) {}

  // Pushes `submits` (whose sequences are `ids`) in one round unless the call was cancelled
  // before (false: nothing pushed). Under the reactor's lock, so a cancel's CancelCommands follow
  // the submits.
  bool PushSequences(std::vector<Command> submits, std::vector<uint64_t> ids);
  // True once the call was cancelled.
  bool cancelled() const;

  void OnCancel() override;
  void OnDone() override { delete this; }

 private:
  CommandQueue* const commands_;
  mutable std::mutex mu_;
  bool cancelled_ = false;     // guarded by mu_
  std::vector<uint64_t> ids_;  // guarded by mu_: the sequences pushed
};

}  // namespace smallmind::worker
