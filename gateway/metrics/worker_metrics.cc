#include "gateway/metrics/worker_metrics.h"

#include <string>
#include <utility>

#include "shared/worker_stat_table.h"

namespace smallmind::gateway {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using shared::ReadWorkerStat;
using shared::WorkerStat;
using smallmind::v1::WorkerStats;

MetricFamily NewFamily(std::string name, std::string help, MetricType type) {
  MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = type;
  return family;
}

void AddSample(MetricFamily& family, std::optional<uint32_t> worker, double value) {
  ClientMetric metric;
  if (worker) metric.label.push_back({"worker", std::to_string(*worker)});
  if (family.type == MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family.metric.push_back(std::move(metric));
}

}  // namespace

std::vector<MetricFamily> WorkerFamilies(std::span<const WorkerSnapshot> workers,
                                         uint64_t gateway_queued) {
  std::vector<MetricFamily> out;
  MetricFamily up = NewFamily("smallmind_worker_up",
                              "1 while the worker answers its Stats polls and serves requests",
                              MetricType::Gauge);
  MetricFamily in_flight =
      NewFamily("smallmind_worker_in_flight_requests",
                "Requests the gateway has open on the worker", MetricType::Gauge);
  MetricFamily restarts = NewFamily(
      "smallmind_worker_restarts_total",
      "Times the worker process was replaced (crash or kill, then restart)", MetricType::Counter);
  double queued = static_cast<double>(gateway_queued);
  for (const WorkerSnapshot& w : workers) {
    AddSample(up, w.index, w.healthy ? 1 : 0);
    AddSample(in_flight, w.index, w.in_flight);
    AddSample(restarts, w.index, static_cast<double>(w.restarts));
    if (w.healthy && w.stats) queued += ReadWorkerStat(w.stats->values(), WorkerStat::kWaiting);
  }
  out.push_back(std::move(up));
  out.push_back(std::move(in_flight));
  out.push_back(std::move(restarts));
  for (const shared::WorkerStatDescriptor& d : shared::kWorkerStatTable) {
    MetricFamily family =
        NewFamily(std::string(d.name), std::string(d.help),
                  d.kind == shared::StatKind::kCounter ? MetricType::Counter : MetricType::Gauge);
    for (const WorkerSnapshot& w : workers) {
      if (w.healthy && w.stats) {
        AddSample(family, w.index, shared::ReadWorkerStat(w.stats->values(), d.id));
      }
    }
    out.push_back(std::move(family));
  }
  MetricFamily start =
      NewFamily("smallmind_worker_start_time_seconds",
                "When the worker process started (Unix seconds)", MetricType::Gauge);
  for (const WorkerSnapshot& w : workers) {
    if (w.healthy && w.stats) AddSample(start, w.index, w.stats->start_time_unix_ms() / 1000.0);
  }
  out.push_back(std::move(start));
  MetricFamily depth = NewFamily(
      "smallmind_request_queue_depth",
      "Requests accepted but not started: the gateway's queue plus the workers' waiting sequences",
      MetricType::Gauge);
  AddSample(depth, std::nullopt, queued);
  out.push_back(std::move(depth));
  return out;
}

uint64_t RestartDetector::Observe(uint32_t index, const WorkerStats& stats) {
  if (seen_.size() <= index) seen_.resize(index + 1);
  Seen& seen = seen_[index];
  if (seen.any &&
      (seen.pid != stats.pid() || seen.start_time_unix_ms != stats.start_time_unix_ms())) {
    ++seen.restarts;
  }
  seen.any = true;
  seen.pid = stats.pid();
  seen.start_time_unix_ms = stats.start_time_unix_ms();
  return seen.restarts;
}

uint64_t RestartDetector::restarts(uint32_t index) const {
  return index < seen_.size() ? seen_[index].restarts : 0;
}

WorkerStatsCollector::WorkerStatsCollector(std::shared_ptr<WorkerPool> pool,
                                           WorkerMetricsSources sources)
    : pool_(std::move(pool)), sources_(std::move(sources)) {}

std::vector<MetricFamily> WorkerStatsCollector::Collect() const {
  // One snapshot of the members: with DNS names they may change between two calls.
  const std::vector<std::shared_ptr<WorkerClient>> links = pool_->Links();
  std::vector<WorkerSnapshot> workers(links.size());  // [members]
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < workers.size(); ++i) {
    const std::shared_ptr<WorkerClient>& link = links[i];
    WorkerSnapshot& w = workers[i];
    w.index = link->index();
    w.healthy = link->healthy();
    w.in_flight = link->in_flight();
    w.stats = link->last_stats();
    if (sources_.supervisor_restarts) {
      w.restarts = sources_.supervisor_restarts(w.index);
    } else {
      w.restarts = w.stats ? restarts_.Observe(w.index, *w.stats) : restarts_.restarts(w.index);
    }
  }
  return WorkerFamilies(workers, sources_.gateway_queued ? sources_.gateway_queued() : 0);
}

}  // namespace smallmind::gateway
