// EmbedCall: one Embed request's journey through the gateway, whatever door it came in by:
// admission (as a request of its inputs' tokens with nothing to generate, so embeddings wait in
// the same queue and under the same limits as generation) -> routing (the least-loaded healthy
// worker; embeddings share no prefix cache) -> the worker's Embed -> `done`. Thread-safe: events
// come from the admission and gRPC threads; the call deletes itself after `done`.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "gateway/relay/request_relay.h"
#include "shared/status.h"
#include "smallmind/v1/inference.pb.h"

namespace smallmind::gateway {

class EmbedCall;

// Cancels the EmbedCall it came from: one still waiting for admission leaves it, one on a worker
// has its worker call cancelled (the worker's reactor then cancels its sequences, which leave the
// batch and free their KV); `done` gets CANCELLED. Nothing once the call ended. Copyable; may
// outlive the call. Thread-safe.
class EmbedCancel {
 public:
  EmbedCancel() = default;
  explicit EmbedCancel(std::weak_ptr<EmbedCall> call) : call_(std::move(call)) {}
  void operator()() const;

 private:
  std::weak_ptr<EmbedCall> call_;
};

class EmbedCall final : private AdmissionWaiter {
 public:
  // The outcome and, when OK, the response (worker_id set); called once, on any thread.
  using Done = std::function<void(const shared::Status&, const smallmind::v1::EmbedResponse&)>;

  // `request` has request_id set and passed CheckEmbedRequest; `deadline` (system_clock max =
  // none) bounds the wait and the worker call. With `rerank_query`, the inputs are documents the
  // worker scores against it (EmbedWork.rerank_query; RunRerank).
  // Returns the call's cancel (it may have finished already).
  static EmbedCancel Run(std::shared_ptr<RelayEnv> env, smallmind::v1::EmbedRequest request,
                         std::chrono::system_clock::time_point deadline, Done done,
                         std::optional<std::string> rerank_query = std::nullopt);
  ~EmbedCall();

 private:
  friend class EmbedCancel;
  EmbedCall(std::shared_ptr<RelayEnv> env, std::chrono::system_clock::time_point deadline,
            Done done);
  void OnAdmitted(AdmissionAnswer answer) override;
  void Cancel();
  // Ends the call: leaves admission when admitted, answers, drops its own reference (self_).
  void Finish(const shared::Status& status);

  std::shared_ptr<RelayEnv> env_;
  const std::chrono::system_clock::time_point deadline_;
  const std::chrono::steady_clock::time_point start_;
  Done done_;
  std::shared_ptr<EmbedCall> self_;  // the call keeps itself until Finish
  std::mutex mu_;
  bool admitted_ = false;   // guarded by mu_
  bool on_worker_ = false;  // guarded by mu_: the worker call is started (or about to be)
  bool cancelled_ = false;  // guarded by mu_
  bool finished_ = false;   // guarded by mu_
  std::shared_ptr<WorkerClient> link_;
  grpc::ClientContext context_;
  smallmind::v1::EmbedWork work_;
  smallmind::v1::EmbedResponse response_;
};

// The model-independent checks of an Embed request (at most kMaxEmbedInputs inputs, each set and
// non-empty, request_id at most 128 bytes, pooling a known value); INVALID_ARGUMENT naming the
// field. The worker checks lengths against the model.
shared::Status CheckEmbedRequest(const smallmind::v1::EmbedRequest& request);

inline constexpr int kMaxEmbedInputs = 2048;

}  // namespace smallmind::gateway
