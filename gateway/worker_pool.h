// The workers behind the gateway: one WorkerLink each, a thread that polls their Stats to keep
// health current, and the routing decision for each request attempt. Built by Gateway, shared by
// reactors and the inference service. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "gateway/gateway_config.h"
#include "gateway/worker_link.h"
#include "shared/status.h"

namespace smallmind::gateway {

class WorkerPool {
 public:
  // Link i serves worker id i at targets[i].
  WorkerPool(const std::vector<std::string>& targets, WorkerPoolOptions options);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void StartPolling();
  // Stops the poll thread and waits for its calls; idempotent.
  void StopPolling();
  // One poll round over every worker, waiting for all answers.
  void PollOnce();

  // The least-loaded healthy worker (round robin on ties), skipping worker `exclude`; the caller
  // owns one in-flight slot on it (BeginRequest done) and calls EndRequest. nullptr when none.
  std::shared_ptr<WorkerLink> Pick(std::optional<uint32_t> exclude = std::nullopt);
  // UNAVAILABLE naming the number of workers: what a request gets when Pick finds none.
  shared::Status NoWorkerStatus() const;

  size_t size() const { return links_.size(); }
  size_t HealthyCount() const;
  const std::shared_ptr<WorkerLink>& link(size_t i) const { return links_[i]; }

  // Polls until some worker answers GetModelInfo, for at most `timeout`; CANCELLED once `stop` is
  // requested.
  shared::Result<smallmind::v1::ModelInfo> WaitForModelInfo(std::chrono::milliseconds timeout,
                                                            std::stop_token stop = {});

 private:
  void PollLoop();

  const WorkerPoolOptions options_;
  std::vector<std::shared_ptr<WorkerLink>> links_;
  std::atomic<uint64_t> route_cursor_{0};
  std::mutex mu_;
  std::condition_variable_any wake_;  // also woken by a stop_token
  bool stopping_ = false;             // guarded by mu_
  std::thread poller_;
};

}  // namespace smallmind::gateway
