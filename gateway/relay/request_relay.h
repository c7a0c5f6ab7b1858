// One Generate request's journey through the gateway, whatever door it came in by: admission ->
// routing -> a worker Submit stream (retried on another worker while nothing was received) -> a
// bounded outbox -> the consumer, with cancellation, the deadline, accounting and the log line.
// A front door (GenerateReactor for gRPC; the HTTP server next) is its RelayConsumer. The states
// live in RelayState. Thread-safe: events come from gRPC and consumer threads, serialised by mu_.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gateway/admission/admission.h"
#include "gateway/admission/validate.h"
#include "gateway/metrics/request_metrics.h"
#include "gateway/relay/active_requests.h"
#include "gateway/relay/outbox.h"
#include "gateway/relay/relay_options.h"
#include "gateway/relay/relay_state.h"
#include "gateway/relay/request_record.h"
#include "gateway/relay/served_models.h"
#include "gateway/relay/worker_attempt.h"
#include "gateway/workers/worker_pool.h"
#include "shared/status.h"
#include "smallmind/v1/inference.pb.h"
#include "smallmind/v1/worker.pb.h"

namespace smallmind::gateway {

class ModelRoutes;

// What every relay shares. Owned jointly (shared_ptr); its owner keeps it until `active` is zero,
// so that the last reference, and the channels with it, never goes on a gRPC callback thread.
struct RelayEnv {
  std::shared_ptr<WorkerPool> pool;
  // The model's admission: with several models its LoadGate (gateway/models/load_gate.h), shared
  // with the ModelResidency that opens and closes it.
  std::shared_ptr<Admission> admission = std::make_unique<OpenAdmission>();
  RelayOptions options;
  ActiveRequests active;
  // What /metrics counts (issue 10); null counts nothing. Shares the GatewayMetrics' lifetime.
  std::shared_ptr<RequestMetrics> metrics;
  // The names a request's `model` may give; set by Gateway::Start before any door opens.
  ServedModels served_models;
  // Every served model by name (gateway/relay/model_routes.h): a door resolves a request's `model`
  // here into that model's env. Null = this env's one model only (served_models). Owned by the
  // Gateway, which outlives the doors.
  ModelRoutes* models = nullptr;
  // False while the gateway's own probes find its gRPC port not accepting connections
  // (gateway/grpc/listener_watch.h): every door's health reports it.
  std::atomic<bool> grpc_accepting{true};
};

// How a request ended, for the door to translate (gRPC status and trailing metadata; HTTP
// status code and headers).
struct RelayOutcome {
  shared::Status status;
  // With a RESOURCE_EXHAUSTED from the gateway queue: when a retry is likely to find room.
  std::optional<std::chrono::milliseconds> retry_after;
};

// The door's side of a relay. Calls come from any thread, never under the relay's lock, so the
// consumer may call the relay back from inside them.
class RelayConsumer {
 public:
  // Send `message` on, then call RequestRelay::OnDelivered. At most one delivery is outstanding;
  // `message` stays valid until OnDelivered.
  virtual void Deliver(const smallmind::v1::GenerateResponse& message) = 0;
  // The request's outcome, exactly once, after the last delivery completed. The consumer then
  // calls RequestRelay::Detach when it will make no more calls on the relay.
  virtual void Complete(const RelayOutcome& outcome) = 0;

 protected:
  ~RelayConsumer() = default;
};

class RequestRelay final : private WorkerAttempt::Owner, private AdmissionWaiter {
 public:
  // `consumer` must outlive the relay's calls to it (until Complete). The relay deletes itself
  // once the consumer detached and its worker side is done.
  RequestRelay(std::shared_ptr<RelayEnv> env, RelayConsumer* consumer);
  RequestRelay(const RequestRelay&) = delete;
  RequestRelay& operator=(const RequestRelay&) = delete;

  // Starts the journey, or completes at once with `request`'s error. `deadline` (system_clock max
  // = none) bounds the worker call. Call once, before anything else.
  void Start(shared::Result<ValidatedRequest> request,
             std::chrono::system_clock::time_point deadline);
  // The outstanding Deliver finished; `ok` = the message was written.
  void OnDelivered(bool ok);
  // The consumer cancelled or went away: the worker call is cancelled and Complete follows with
  // CANCELLED (DEADLINE_EXCEEDED once the deadline passed: gRPC cancels a call at its deadline)
  // once the outstanding delivery (if any) finished. Harmless after Complete.
  void Cancel();
  // After Complete: the consumer makes no more calls. The relay may be deleted at once.
  void Detach();

 private:
  // What one event asks for, with what the relay resolved under its lock.
  struct Actions {
    RelayEffects fx;
    WorkerAttempt* call = nullptr;  // the current call, for start/read/cancel/release
    const smallmind::v1::GenerateResponse* deliver = nullptr;
    std::optional<ServiceSample> served;  // with release_admission
    RelayOutcome outcome;                 // with finish
    std::string finished_line;
  };

  ~RequestRelay();

  void OnAdmitted(AdmissionAnswer answer) override;
  // Why the consumer went away: DEADLINE_EXCEEDED at (or just before) the deadline, else OK (plain
  // CANCELLED).
  shared::Status EndedBy() const;
  void OnWorkerRead(WorkerAttempt* call, bool ok) override;
  void OnWorkerDone(WorkerAttempt* call, shared::Status status) override;

  // Applies `event` under mu_, carries out its effects after, and deletes the relay when it is
  // done and no other thread is inside. `before` runs under mu_ first.
  template <typename Before>
  void Handle(const RelayEvent& event, Before before);
  void Handle(const RelayEvent& event);
  void ApplyLocked(const RelayEvent& event, Actions& actions);
  // The one place a worker is picked for an attempt (issue 10: cache-aware routing plugs in here).
  // `cause` is the event that asked for it (a worker failure when retrying).
  void RouteLocked(const RelayEvent& cause, Actions& actions);
  void Perform(const Actions& actions);

  std::shared_ptr<RelayEnv> env_;  // released by the destructor, before active.Remove()
  RelayConsumer* const consumer_;
  std::chrono::system_clock::time_point deadline_;
  std::optional<ValidatedRequest> request_;  // set by Start when valid
  uint64_t tokens_ = 0;  // what the request adds to its worker's outstanding tokens

  std::mutex mu_;
  // Guarded by mu_ from here on.
  RelayState state_;
  int busy_ = 0;  // threads inside Handle: the relay is deleted by the last one out
  RequestRecord record_;
  std::optional<std::chrono::milliseconds> retry_after_;  // from a refusing admission
  Outbox outbox_;
  smallmind::v1::SubmitRequest submit_;                // read by the current call until its OnDone
  std::vector<std::unique_ptr<WorkerAttempt>> calls_;  // every attempt; the last is current
};

}  // namespace smallmind::gateway
