#include "gateway/metrics/gateway_metrics.h"

#include <utility>

#include <prometheus/text_serializer.h>

namespace smallmind::gateway {

GatewayMetrics::GatewayMetrics() = default;

RequestMetrics& GatewayMetrics::requests(const std::string& model) {
  std::lock_guard<std::mutex> lock(mu_);
  std::unique_ptr<RequestMetrics>& metrics = requests_[model];
  if (!metrics) metrics = std::make_unique<RequestMetrics>(registry_, model);
  return *metrics;
}

void GatewayMetrics::AttachWorkers(std::shared_ptr<WorkerPool> pool, WorkerMetricsSources sources) {
  auto workers = std::make_shared<const WorkerStatsCollector>(std::move(pool), std::move(sources));
  std::lock_guard<std::mutex> lock(mu_);
  workers_ = std::move(workers);
}

void GatewayMetrics::SetModelName(std::string name) {
  std::lock_guard<std::mutex> lock(mu_);
  model_name_ = std::move(name);
}

std::vector<prometheus::MetricFamily> GatewayMetrics::Collect() const {
  std::vector<prometheus::MetricFamily> families = registry_.Collect();
  std::shared_ptr<const WorkerStatsCollector> workers;
  std::string model_name;
  {
    std::lock_guard<std::mutex> lock(mu_);
    workers = workers_;
    model_name = model_name_;
  }
  if (workers) {
    std::vector<prometheus::MetricFamily> more = workers->Collect();
    families.insert(families.end(), std::make_move_iterator(more.begin()),
                    std::make_move_iterator(more.end()));
  }
  if (!model_name.empty()) {
    for (prometheus::MetricFamily& family : families) {
      for (prometheus::ClientMetric& metric : family.metric) {
        metric.label.push_back({"model_name", model_name});
      }
    }
  }
  return families;
}

std::string GatewayMetrics::RenderText() const {
  return prometheus::TextSerializer().Serialize(Collect());
}

}  // namespace smallmind::gateway
