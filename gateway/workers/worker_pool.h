// The workers behind the gateway: one WorkerClient each, a thread that polls their Stats to keep
// health current (and re-resolves DNS names in --worker-endpoints, so workers join and leave), and
// the routing decision for each request attempt. Built by Gateway, shared by reactors and the
// inference service. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "gateway/admission/validate.h"
#include "gateway/workers/prefix_memory.h"
#include "gateway/workers/router.h"
#include "gateway/workers/worker_client.h"
#include "gateway/workers/worker_endpoints.h"
#include "gateway/workers/worker_options.h"
#include "shared/status.h"

namespace smallmind::gateway {

class WorkerPool {
 public:
  // One link per target; a DNS name in `endpoints` (see gateway/workers/worker_endpoints.h) is one
  // link per address, resolved now and again every options.resolve_interval. Worker ids are handed
  // out in order of first sight and stay with their target: fixed targets get 0, 1, ... in order,
  // and an address that leaves and comes back gets its old id.
  WorkerPool(const std::vector<std::string>& endpoints, WorkerPoolOptions options);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void StartPolling();
  // Stops the poll thread and waits for its calls; idempotent.
  void StopPolling();
  // One poll round over every worker, waiting for all answers.
  void PollOnce();
  // Resolves the names again and updates the members: new addresses join (unhealthy until their
  // first answer), vanished ones leave routing at once (their open requests keep their link).
  // Called by the poll thread every resolve_interval; a no-op without names.
  void Refresh();
  // Replaces the targets (a model loaded on new workers, or unloaded: none); ids restart at 0 in
  // `targets`' order. Links that leave go as in Refresh: open requests keep theirs.
  void SetTargets(const std::vector<std::string>& targets);

  // The worker for `request` (gateway/workers/router.h: least-loaded with prefix affinity),
  // skipping worker id `exclude`; the caller owns one in-flight slot on it
  // (BeginRequest(RequestTokens(request)) done) and calls EndRequest with the same tokens. nullptr
  // when no worker is healthy.
  std::shared_ptr<WorkerClient> Pick(const ValidatedRequest& request,
                                     std::optional<uint32_t> exclude = std::nullopt);
  // For calls that are not requests (Tokenize, GetModelInfo): the least-loaded healthy worker,
  // BeginRequest() done; nullptr when none.
  std::shared_ptr<WorkerClient> Pick();
  // What `request` adds to its worker's outstanding tokens: its prompt (token ids, or text bytes
  // / 4) plus max_new_tokens (0 = the default).
  static uint64_t RequestTokens(const ValidatedRequest& request);
  // UNAVAILABLE naming the number of workers: what a request gets when Pick finds none.
  shared::Status NoWorkerStatus() const;

  // The current members, in id order. Membership changes only with DNS names, so with fixed
  // targets position i is worker id i.
  std::vector<std::shared_ptr<WorkerClient>> Links() const;
  size_t size() const;
  size_t HealthyCount() const;
  // The member at position i of Links(); nullptr when there are fewer members now.
  std::shared_ptr<WorkerClient> link(size_t i) const;

  // Polls until some worker answers GetModelInfo, for at most `timeout`; CANCELLED once `stop` is
  // requested.
  shared::Result<smallmind::v1::ModelInfo> WaitForModelInfo(std::chrono::milliseconds timeout,
                                                            std::stop_token stop = {});

 private:
  using Members = std::vector<std::shared_ptr<WorkerClient>>;
  std::shared_ptr<const Members> members() const;
  void PollLoop();
  // Refresh's body: `endpoints_` resolved into the members. Needs refresh_mu_.
  void RefreshLocked();
  // The router's view of `links` (position for position); `keys` (may be null) fills in prefix
  // matches.
  std::vector<WorkerLoad> Loads(const Members& links, const shared::PromptPrefixKeys* keys,
                                std::optional<uint32_t> exclude) const;

  const WorkerPoolOptions options_;
  mutable std::mutex members_mu_;
  std::shared_ptr<const Members> members_;  // guarded by members_mu_; replaced, never edited
  std::mutex refresh_mu_;                   // serializes Refresh
  WorkerEndpoints endpoints_;               // guarded by refresh_mu_
  std::map<std::string, uint32_t> ids_;     // guarded by refresh_mu_: target -> worker id
  // Links that left while requests still held them, kept so that their channel is destroyed on
  // the poll thread and never on a gRPC callback thread (gRPC 1.51 aborts then). Guarded by
  // refresh_mu_.
  Members retired_;
  std::atomic<uint64_t> route_cursor_{0};
  PrefixMemory prefixes_;
  std::mutex mu_;
  std::condition_variable_any wake_;  // also woken by a stop_token
  bool stopping_ = false;             // guarded by mu_
  std::thread poller_;
};

}  // namespace smallmind::gateway
