// The gateway process as an object: spawns (or attaches to) the workers, learns the model's limits
// from the first ready one, and serves smallmind.v1.Inference with health and reflection, over TLS
// when configured, behind API keys when configured. Built by main() and by tests. Start, Shutdown
// and the accessors are called from one thread; ReloadApiKeys and CancelStreams from any.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "gateway/admission/admission_queue.h"
#include "gateway/gateway_config.h"
#include "gateway/grpc/generate_reactor.h"
#include "gateway/grpc/inference_service.h"
#include "gateway/grpc/listener_watch.h"
#include "gateway/metrics/gateway_metrics.h"
#include "gateway/metrics/metrics_endpoint.h"
#include "gateway/models/model_residency.h"
#include "gateway/relay/model_routes.h"
#include "gateway/relay/public_door.h"
#include "gateway/security/api_key_store.h"
#include "gateway/security/tls_credentials.h"
#include "gateway/workers/worker_pool.h"
#include "gateway/workers/worker_supervisor.h"
#include "shared/status.h"
#include "smallmind/v1/inference.pb.h"

namespace smallmind::gateway {

class Gateway {
 public:
  explicit Gateway(GatewayConfig config);
  ~Gateway();  // Shutdown()
  Gateway(const Gateway&) = delete;
  Gateway& operator=(const Gateway&) = delete;

  // Keys and TLS files read, port free, workers ready, model known, server listening; errors say
  // which step failed, and nothing is spawned before the port is known to be free. Returns
  // CANCELLED early once `stop` is requested (a signal during a long model load).
  shared::Status Start(std::stop_token stop = {});
  // Another public door (the HTTP server), started by Start after the gRPC server and drained
  // beside it. Call before Start.
  void AddDoor(std::unique_ptr<PublicDoor> door) { doors_.push_back(std::move(door)); }
  const std::vector<std::unique_ptr<PublicDoor>>& doors() const { return doors_; }
  // Ordered shutdown: report NOT_SERVING, stop accepting, let streams finish for up to
  // drain_timeout (then cancel them), wait for their worker calls, stop the workers. Idempotent.
  void Shutdown();
  // Cancels every open stream now, cutting a drain short (a second SIGINT). Thread-safe.
  void CancelStreams();
  // Re-reads --api-keys-file (SIGHUP); on error the keys in use stay. Thread-safe.
  shared::Status ReloadApiKeys();
  // Called once, from the listener watch's thread, when the gateway must exit with `exit_code`
  // (its gRPC listener no longer accepts: gateway/grpc/listener_watch.h). Call before Start.
  void OnFatal(std::function<void(int exit_code)> on_fatal) { on_fatal_ = std::move(on_fatal); }
  // The exit code a wedged gRPC listener ends the gateway with.
  static constexpr int kWedgedListenerExitCode = 3;

  int port() const { return port_; }
  // The address the gRPC port is bound to: --listen-host and the port, e.g. 0.0.0.0:50051.
  std::string listen_address() const;
  // Where a client on this machine connects: 127.0.0.1:PORT when listening on a wildcard host.
  std::string connect_address() const;
  const smallmind::v1::ModelInfo& model_info() const { return model_info_; }
  WorkerPool& pool() { return *env_->pool; }
  // The gateway queue, once Start has reached the workers.
  AdmissionQueue& admission() { return *admission_; }
  // Every served model: its state, its pool and gate (null until Start reached the workers).
  ModelResidency* residency() { return residency_.get(); }
  // What every door checks: the API keys, and the TLS material (null until Start, or plaintext).
  const std::shared_ptr<ApiKeyStore>& api_keys() const { return api_keys_; }
  const TlsCredentials* tls() const { return tls_ ? &*tls_ : nullptr; }
  // What /metrics shows (any door may serve its RenderText()).
  const std::shared_ptr<GatewayMetrics>& metrics() const { return metrics_; }
  // The --metrics-port actually bound; -1 when off.
  int metrics_port() const { return metrics_endpoint_ ? metrics_endpoint_->port() : -1; }

 private:
  shared::Status LoadSecurity();
  shared::Status StartMetrics();
  shared::Status StartWorkers(std::stop_token stop);
  shared::Result<ModelCatalog> BuildCatalog(ResidencyOptions& options, std::stop_token stop);
  void BuildModelEnvs();
  void AttachWorkerMetrics();
  shared::Status StartServer();
  shared::Status StartDoors();
  void StartListenerWatch();

  GatewayConfig config_;
  const std::shared_ptr<ApiKeyStore> api_keys_;
  std::optional<TlsCredentials> tls_;
  const std::shared_ptr<GatewayMetrics> metrics_ = std::make_shared<GatewayMetrics>();
  std::unique_ptr<MetricsEndpoint> metrics_endpoint_;
  std::shared_ptr<RelayEnv> env_;                // the default (first) model's
  std::vector<std::shared_ptr<RelayEnv>> envs_;  // every model's, env_ first
  std::unique_ptr<ModelResidency> residency_;    // after the envs: stopped and destroyed first
  std::unique_ptr<ModelRoutes> routes_;          // the envs' `models`
  AdmissionQueue* admission_ = nullptr;          // the default model's, owned by residency_
  smallmind::v1::ModelInfo model_info_;
  std::unique_ptr<InferenceService> service_;
  std::vector<std::unique_ptr<PublicDoor>> doors_;  // hold relays of env_: stopped before it
  std::mutex server_mu_;                  // orders CancelStreams against Start and Shutdown
  std::unique_ptr<grpc::Server> server_;  // guarded by server_mu_; after service_: destroyed first
  bool cancel_streams_ = false;           // guarded by server_mu_
  int port_ = 0;
  bool shut_down_ = false;
  std::function<void(int)> on_fatal_;
  std::unique_ptr<ListenerWatch> listener_watch_;  // stopped first in Shutdown
};

}  // namespace smallmind::gateway
