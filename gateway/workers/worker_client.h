// Client side of worker.proto for one worker: its channels and stubs (requests on one connection,
// Stats polls on their own, so a poll never queues behind stream traffic), the requests the gateway
// has open on it, and whether it last answered or its streams still progress. Shared (shared_ptr)
// by the pool, reactors and the supervisor probe. Thread-safe; the blocking helpers must not be
// called from gRPC reactions.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <grpcpp/channel.h>

#include "shared/status.h"
#include "smallmind/v1/worker.grpc.pb.h"

namespace smallmind::gateway {

class WorkerClient {
 public:
  // `target` is a gRPC target: "unix:/path/worker-0.sock" or "host:port". `index` is the worker's
  // 0-based id, reported to clients as timings.worker_id.
  WorkerClient(uint32_t index, std::string target);

  uint32_t index() const { return index_; }
  const std::string& target() const { return target_; }
  smallmind::v1::Worker::Stub& stub() { return *stub_; }

  // Healthy = the last Stats call answered (or missed its deadline while a stream of this worker
  // delivered within progress_window: slow, not down; gateway/workers/poll_verdict.h) and no
  // request since saw UNAVAILABLE.
  bool healthy() const { return healthy_.load(std::memory_order_acquire); }
  // Logs transitions, with `why` when turning unhealthy.
  void SetHealthy(bool healthy, std::string_view why = {});

  uint32_t in_flight() const { return in_flight_.load(std::memory_order_relaxed); }
  // Prompt + max_new_tokens of the requests in flight, as the gateway estimates them.
  uint64_t outstanding_tokens() const {
    return outstanding_tokens_.load(std::memory_order_relaxed);
  }
  void BeginRequest(uint64_t tokens = 0) {
    in_flight_.fetch_add(1, std::memory_order_relaxed);
    outstanding_tokens_.fetch_add(tokens, std::memory_order_relaxed);
  }
  void EndRequest(uint64_t tokens = 0) {
    in_flight_.fetch_sub(1, std::memory_order_relaxed);
    outstanding_tokens_.fetch_sub(tokens, std::memory_order_relaxed);
  }

  // A stream of this worker delivered a message now (WorkerAttempt's reads).
  void NoteProgress();
  // Since the last NoteProgress; nullopt before the first.
  std::optional<std::chrono::milliseconds> SinceProgress() const;

  // One Stats call that updates health and last_stats(); `done` runs on a gRPC thread.
  // `progress_window`: how recent a stream's message keeps a late poll from being a death.
  void PollStats(std::chrono::milliseconds timeout, std::chrono::milliseconds progress_window,
                 std::function<void(const shared::Status&)> done);
  std::optional<smallmind::v1::WorkerStats> last_stats() const;

  // Blocking calls for startup and supervision (never from a reaction).
  shared::Result<smallmind::v1::WorkerStats> Stats(std::chrono::milliseconds timeout);
  shared::Result<smallmind::v1::ModelInfo> GetModelInfo(std::chrono::milliseconds timeout);

 private:
  // Health from one poll's outcome (gateway/workers/poll_verdict.h).
  void Judge(const grpc::Status& s, std::chrono::milliseconds progress_window);

  const uint32_t index_;
  const std::string target_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<smallmind::v1::Worker::Stub> stub_;
  std::shared_ptr<grpc::Channel> poll_channel_;  // Stats only
  std::unique_ptr<smallmind::v1::Worker::Stub> poll_stub_;
  std::atomic<bool> healthy_{false};
  std::atomic<bool> slow_{false};              // the last poll was late; for the log
  std::atomic<int64_t> last_progress_ns_{-1};  // steady_clock; -1 = never
  std::atomic<uint32_t> in_flight_{0};
  std::atomic<uint64_t> outstanding_tokens_{0};
  mutable std::mutex stats_mu_;
  std::optional<smallmind::v1::WorkerStats> last_stats_;  // guarded by stats_mu_
};

}  // namespace smallmind::gateway
