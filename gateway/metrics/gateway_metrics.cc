#include "gateway/metrics/gateway_metrics.h"

#include <algorithm>
#include <iterator>
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

void GatewayMetrics::AttachWorkers(std::shared_ptr<WorkerPool> pool, WorkerMetricsSources sources,
                                   const std::string& model) {
  auto workers = std::make_shared<const WorkerStatsCollector>(std::move(pool), std::move(sources));
  std::lock_guard<std::mutex> lock(mu_);
  workers_[model] = std::move(workers);
}

void GatewayMetrics::SetModelName(std::string name) {
  std::lock_guard<std::mutex> lock(mu_);
  model_name_ = std::move(name);
}

namespace {

// Appends `more` to `families`, each labelled model="`model`" (unless ""), merging a family into
// one of the same name (a scrape may name a family once).
void MergeFamilies(std::vector<prometheus::MetricFamily>& families,
                   std::vector<prometheus::MetricFamily> more, const std::string& model) {
  for (prometheus::MetricFamily& family : more) {
    if (!model.empty()) {
      for (prometheus::ClientMetric& metric : family.metric) {
        metric.label.push_back({"model", model});
      }
    }
    auto same =
        std::find_if(families.begin(), families.end(),
                     [&](const prometheus::MetricFamily& f) { return f.name == family.name; });
    if (same == families.end()) {
      families.push_back(std::move(family));
    } else {
      same->metric.insert(same->metric.end(), std::make_move_iterator(family.metric.begin()),
                          std::make_move_iterator(family.metric.end()));
    }
  }
}

}  // namespace

std::vector<prometheus::MetricFamily> GatewayMetrics::Collect() const {
  std::vector<prometheus::MetricFamily> families = registry_.Collect();
  std::map<std::string, std::shared_ptr<const WorkerStatsCollector>> workers;
  std::string model_name;
  {
    std::lock_guard<std::mutex> lock(mu_);
    workers = workers_;
    model_name = model_name_;
  }
  for (const auto& [model, collector] : workers) {
    MergeFamilies(families, collector->Collect(), model);
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
