// The gateway process as an object: spawns (or attaches to) the workers, learns the model's limits
// from the first ready one, and serves smallmind.v1.Inference with health and reflection. Built by
// main() and by tests. Start, Shutdown and the accessors are called from one thread.
#pragma once

#include <memory>
#include <stop_token>
#include <string>

#include <grpcpp/grpcpp.h>

#include "gateway/gateway_config.h"
#include "gateway/generate_reactor.h"
#include "gateway/inference_service.h"
#include "gateway/worker_pool.h"
#include "gateway/worker_supervisor.h"
#include "shared/status.h"
#include "smallmind/v1/inference.pb.h"

namespace smallmind::gateway {

class Gateway {
 public:
  explicit Gateway(GatewayConfig config);
  ~Gateway();  // Shutdown()
  Gateway(const Gateway&) = delete;
  Gateway& operator=(const Gateway&) = delete;

  // Workers ready, model known, server listening; errors say which step failed. Returns
  // CANCELLED early once `stop` is requested (a signal during a long model load).
  shared::Status Start(std::stop_token stop = {});
  // Ordered shutdown: report NOT_SERVING, stop accepting, let streams finish for up to
  // drain_timeout (then cancel them), wait for their worker calls, stop the workers. Idempotent.
  void Shutdown();

  int port() const { return port_; }
  // Where a client on this machine connects: 127.0.0.1:PORT when listening on a wildcard host.
  std::string connect_address() const;
  const smallmind::v1::ModelInfo& model_info() const { return model_info_; }
  WorkerPool& pool() { return *env_->pool; }
  // Null when attached to --worker-endpoints.
  WorkerSupervisor* supervisor() { return supervisor_.get(); }

 private:
  shared::Status StartWorkers(std::stop_token stop);
  shared::Status StartServer();

  GatewayConfig config_;
  std::unique_ptr<WorkerSupervisor> supervisor_;
  std::shared_ptr<RelayEnv> env_;
  smallmind::v1::ModelInfo model_info_;
  std::unique_ptr<InferenceService> service_;
  std::unique_ptr<grpc::Server> server_;  // declared after service_: destroyed first
  int port_ = 0;
  bool shut_down_ = false;
};

}  // namespace smallmind::gateway
