#include "gateway/metrics/worker_metrics.h"

#include <string>
#include <utility>

namespace smallmind::gateway {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using smallmind::v1::WorkerStats;

// One series per worker taken from its last Stats answer.
struct StatsSeries {
  const char* name;
  const char* help;
  MetricType type;
  double (*value)(const WorkerStats&);
};

constexpr StatsSeries kStatsSeries[] = {
    {"smallmind_worker_running_sequences", "Sequences in the worker's running batch",
     MetricType::Gauge, [](const WorkerStats& s) { return double(s.running()); }},
    {"smallmind_worker_waiting_sequences", "Sequences queued in the worker, not yet started",
     MetricType::Gauge, [](const WorkerStats& s) { return double(s.waiting()); }},
    {"smallmind_kv_pages_used", "KV blocks referenced by the worker's running sequences",
     MetricType::Gauge, [](const WorkerStats& s) { return double(s.kv_pages_used()); }},
    {"smallmind_kv_pages_total", "KV blocks in the worker's pool", MetricType::Gauge,
     [](const WorkerStats& s) { return double(s.kv_pages_total()); }},
    {"smallmind_kv_pages_cached", "Unreferenced KV blocks kept for prefix reuse (evictable)",
     MetricType::Gauge, [](const WorkerStats& s) { return double(s.kv_pages_cached()); }},
    {"smallmind_kv_tokens_stored", "Positions holding K/V in used blocks (a shared block once)",
     MetricType::Gauge, [](const WorkerStats& s) { return double(s.kv_tokens_stored()); }},
    {"smallmind_kv_token_slots",
     "Positions the used blocks could hold; tokens_stored / token_slots is KV utilisation",
     MetricType::Gauge, [](const WorkerStats& s) { return double(s.kv_token_slots()); }},
    {"smallmind_worker_requests_total", "Requests the worker process admitted", MetricType::Counter,
     [](const WorkerStats& s) { return double(s.requests_total()); }},
    {"smallmind_worker_prompt_tokens_total",
     "Prompt tokens the worker process admitted (cached ones included)", MetricType::Counter,
     [](const WorkerStats& s) { return double(s.prompt_tokens_total()); }},
    {"smallmind_worker_generation_tokens_total", "Tokens the worker process generated",
     MetricType::Counter, [](const WorkerStats& s) { return double(s.generation_tokens_total()); }},
    {"smallmind_worker_preemptions_total",
     "Sequences preempted (blocks freed, recomputed later) because the KV pool ran out",
     MetricType::Counter, [](const WorkerStats& s) { return double(s.preemptions_total()); }},
    {"smallmind_worker_steps_total", "Engine steps (one pass over the running batch)",
     MetricType::Counter, [](const WorkerStats& s) { return double(s.steps_total()); }},
    {"smallmind_worker_prefill_tokens_total",
     "Positions computed as prefill (prompt chunks, recomputation; prefix-cache hits excluded)",
     MetricType::Counter, [](const WorkerStats& s) { return double(s.prefill_tokens_total()); }},
    {"smallmind_worker_decode_tokens_total",
     "Positions computed as decode (one per sequence a step)", MetricType::Counter,
     [](const WorkerStats& s) { return double(s.decode_tokens_total()); }},
    {"smallmind_worker_tokens_per_step", "Tokens fed per step, recent average (about 16 steps)",
     MetricType::Gauge, [](const WorkerStats& s) { return s.tokens_per_step(); }},
    {"smallmind_worker_sequences_per_step",
     "Sequences per step (the batch size), recent average (about 16 steps)", MetricType::Gauge,
     [](const WorkerStats& s) { return s.sequences_per_step(); }},
    {"smallmind_worker_context_shifts_total", "Context shifts (stopping.context_overflow = SHIFT)",
     MetricType::Counter, [](const WorkerStats& s) { return double(s.context_shifts_total()); }},
    {"smallmind_prefix_cache_lookups_total", "Admissions that looked for a cached prefix",
     MetricType::Counter,
     [](const WorkerStats& s) { return double(s.prefix_cache_lookups_total()); }},
    {"smallmind_prefix_cache_hits_total", "Admissions that reused at least one cached KV block",
     MetricType::Counter, [](const WorkerStats& s) { return double(s.prefix_cache_hits_total()); }},
    {"smallmind_prefix_cache_hit_blocks_total", "Cached KV blocks reused instead of recomputed",
     MetricType::Counter,
     [](const WorkerStats& s) { return double(s.prefix_cache_hit_blocks_total()); }},
    {"smallmind_prefix_cache_hit_tokens_total",
     "Prompt positions not recomputed thanks to the cache", MetricType::Counter,
     [](const WorkerStats& s) { return double(s.prefix_cache_hit_tokens_total()); }},
    {"smallmind_prefix_cache_evictions_total", "Cached KV blocks evicted to make room",
     MetricType::Counter,
     [](const WorkerStats& s) { return double(s.prefix_cache_evictions_total()); }},
    {"smallmind_worker_start_time_seconds", "When the worker process started (Unix seconds)",
     MetricType::Gauge, [](const WorkerStats& s) { return s.start_time_unix_ms() / 1000.0; }},
};

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
    if (w.healthy && w.stats) queued += w.stats->waiting();
  }
  out.push_back(std::move(up));
  out.push_back(std::move(in_flight));
  out.push_back(std::move(restarts));
  for (const StatsSeries& series : kStatsSeries) {
    MetricFamily family = NewFamily(series.name, series.help, series.type);
    for (const WorkerSnapshot& w : workers) {
      if (w.healthy && w.stats) AddSample(family, w.index, series.value(*w.stats));
    }
    out.push_back(std::move(family));
  }
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
