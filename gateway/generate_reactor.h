// One ServerWriteReactor per Generate stream: relays a worker's Submit stream through a bounded
// outbox (one write in flight), retries once before the first token, forwards a client cancel.
// Built by InferenceService; reactions run concurrently on gRPC threads, guarded by mu_.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "gateway/active_requests.h"
#include "gateway/gateway_config.h"
#include "gateway/validate.h"
#include "gateway/worker_pool.h"
#include "shared/status.h"
#include "smallmind/v1/worker.grpc.pb.h"

namespace smallmind::gateway {

// What every reactor shares. Owned jointly (shared_ptr) so that a reactor finishing late never
// outlives what it touches.
struct RelayEnv {
  std::shared_ptr<WorkerPool> pool;
  RelayOptions options;
  ActiveRequests active;
};

class GenerateReactor final : public grpc::ServerWriteReactor<smallmind::v1::GenerateResponse> {
 public:
  // Starts the relay, or finishes at once with `request`'s error. Deletes itself once the client
  // stream and its worker call are both done.
  GenerateReactor(grpc::CallbackServerContext* context, std::shared_ptr<RelayEnv> env,
                  shared::Result<ValidatedRequest> request);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  class WorkerCall;
  // What a reaction decided under mu_, carried out after releasing it.
  struct Actions;
  // Where the worker stream's reading stands; it holds a gRPC hold until kStopped.
  enum class ReadState { kPending, kPaused, kStopped };

  ~GenerateReactor() override;

  void StartAttempt(std::shared_ptr<WorkerLink> link);
  void OnWorkerRead(WorkerCall* call, bool ok);
  void OnWorkerDone(WorkerCall* call, const grpc::Status& status);

  void AcceptWorkerMessageLocked(WorkerCall* call, Actions* actions);
  void StopReadingLocked(Actions* actions);
  void FinishLocked(grpc::Status status, Actions* actions);
  void MaybeFinishLocked(Actions* actions);
  void CheckDoneLocked(Actions* actions);
  void Perform(Actions& actions);
  std::string FinishedLineLocked(const grpc::Status& status) const;

  const std::shared_ptr<RelayEnv> env_;
  const std::chrono::steady_clock::time_point start_;
  const std::chrono::system_clock::time_point deadline_;  // the client's, given to the worker
  smallmind::v1::SubmitRequest submit_;

  std::mutex mu_;
  // Guarded by mu_ from here on.
  std::vector<std::unique_ptr<WorkerCall>> calls_;  // every attempt; the last is current
  bool worker_active_ = false;  // a worker call is started (or about to be) and not done
  ReadState read_state_ = ReadState::kStopped;
  int attempts_ = 0;
  std::vector<smallmind::v1::GenerateResponse> outbox_;  // [outbox_capacity] ring, reused
  size_t out_head_ = 0;
  size_t out_size_ = 0;
  bool write_in_flight_ = false;
  std::optional<grpc::Status> pending_finish_;  // sent once the outbox drains
  bool finish_called_ = false;
  bool cancelled_ = false;  // client cancelled or went away
  bool server_done_ = false;
  bool destroyed_ = false;
  // Request accounting for the log line.
  uint32_t worker_id_ = 0;
  size_t messages_ = 0;
  size_t tokens_ = 0;
  std::optional<std::chrono::steady_clock::time_point> first_token_;
  std::chrono::steady_clock::time_point last_token_;
  smallmind::v1::FinishReason finish_reason_ = smallmind::v1::FINISH_REASON_UNSPECIFIED;
  uint32_t prompt_tokens_ = 0;
  double decode_tokens_per_s_ = 0;
};

}  // namespace smallmind::gateway
