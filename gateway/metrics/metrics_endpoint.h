// MetricsEndpoint: GET /metrics over HTTP on --metrics-port (prometheus-cpp's pull exposer, its
// own threads), serving a GatewayMetrics. Built by Gateway before any worker is spawned, so a busy
// port stops the start early. Thread-safe; destroying it stops the listener.
#pragma once

#include <memory>
#include <string>

#include <prometheus/exposer.h>

#include "gateway/metrics/gateway_metrics.h"
#include "shared/status.h"

namespace smallmind::gateway {

class MetricsEndpoint {
 public:
  // Listens on host:port (port 0 = any free one). UNAVAILABLE naming the address when it cannot.
  static shared::Result<std::unique_ptr<MetricsEndpoint>> Start(
      const std::string& host, int port, std::shared_ptr<GatewayMetrics> metrics);

  int port() const { return port_; }

 private:
  MetricsEndpoint(std::unique_ptr<prometheus::Exposer> exposer,
                  std::shared_ptr<GatewayMetrics> metrics, int port);

  std::shared_ptr<GatewayMetrics> metrics_;  // kept alive: the exposer holds a weak_ptr
  std::unique_ptr<prometheus::Exposer> exposer_;
  int port_ = 0;
};

}  // namespace smallmind::gateway
