// GatewayMetrics: everything the gateway's /metrics shows, as one prometheus::Collectable: the
// request-level families the relays observe (RequestMetrics, in its own registry) and, once the
// workers exist, the worker-level families read from the pool at scrape time. MetricsEndpoint
// serves it on --metrics-port; the HTTP door serves RenderText() as GET /metrics. Built by
// Gateway, shared (shared_ptr) with the endpoints. Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

#include "gateway/metrics/request_metrics.h"
#include "gateway/metrics/worker_metrics.h"
#include "gateway/workers/worker_pool.h"

namespace smallmind::gateway {

class GatewayMetrics final : public prometheus::Collectable {
 public:
  GatewayMetrics();
  GatewayMetrics(const GatewayMetrics&) = delete;
  GatewayMetrics& operator=(const GatewayMetrics&) = delete;

  // The request families of one served model, its series labelled model="`model`" (made on first
  // call; "" = no model label). The reference stays valid as long as this object.
  RequestMetrics& requests(const std::string& model = "");
  // From now on scrapes include the workers of `pool`, each series labelled model="`model`" (""
  // = no such label). Called once per served model when its pool exists (again with the same
  // `model` to replace it); the families of several models are merged by name.
  void AttachWorkers(std::shared_ptr<WorkerPool> pool, WorkerMetricsSources sources,
                     const std::string& model = "");
  // From now on every series carries model_name="`name`" (the first --served-model-name), as
  // vLLM's do, so dashboards built for vLLM can filter by it. Unset: no such label.
  void SetModelName(std::string name);

  std::vector<prometheus::MetricFamily> Collect() const override;
  // The whole exposition in the Prometheus text format (version 0.0.4), as served on
  // --metrics-port: what any other door answers to GET /metrics.
  std::string RenderText() const;

 private:
  prometheus::Registry registry_;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<RequestMetrics>> requests_;  // guarded by mu_
  // Guarded by mu_: by model, empty until attached.
  std::map<std::string, std::shared_ptr<const WorkerStatsCollector>> workers_;
  std::string model_name_;  // guarded by mu_; "" until set
};

// The Content-Type of RenderText()'s body.
inline constexpr char kPrometheusTextContentType[] = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace smallmind::gateway
