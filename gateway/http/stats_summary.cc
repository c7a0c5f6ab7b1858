#include "gateway/http/stats_summary.h"

#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

namespace smallmind::gateway::http {
namespace {

using Json = nlohmann::ordered_json;
using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

const MetricFamily* Family(const std::vector<MetricFamily>& families, std::string_view name) {
  for (const MetricFamily& f : families) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

double Value(const MetricFamily& f, const ClientMetric& m) {
  switch (f.type) {
    case MetricType::Counter: return m.counter.value;
    case MetricType::Gauge: return m.gauge.value;
    case MetricType::Untyped: return m.untyped.value;
    default: return 0;
  }
}

// The family's series added up (0 when absent), as an integer: every summed family counts.
uint64_t Sum(const std::vector<MetricFamily>& families, std::string_view name) {
  const MetricFamily* f = Family(families, name);
  double total = 0;
  if (f != nullptr) {
    for (const ClientMetric& m : f->metric) total += Value(*f, m);
  }
  return static_cast<uint64_t>(total);
}

std::string_view Label(const ClientMetric& m, std::string_view name) {
  for (const ClientMetric::Label& l : m.label) {
    if (l.name == name) return l.value;
  }
  return {};
}

Json Requests(const std::vector<MetricFamily>& families) {
  Json by_status = Json::object();
  uint64_t failed = 0;
  if (const MetricFamily* f = Family(families, "smallmind_requests_total")) {
    for (const ClientMetric& m : f->metric) {
      const std::string status(Label(m, "status"));
      const auto n = static_cast<uint64_t>(Value(*f, m));
      by_status[status] = by_status.value(status, uint64_t{0}) + n;
      if (status != "OK" && status != "CANCELLED") failed += n;
    }
  }
  by_status["failed"] = failed;
  return by_status;
}

Json Histogram(const std::vector<MetricFamily>& families, std::string_view name) {
  uint64_t count = 0;
  double sum = 0;
  if (const MetricFamily* f = Family(families, name)) {
    for (const ClientMetric& m : f->metric) {
      count += m.histogram.sample_count;
      sum += m.histogram.sample_sum;
    }
  }
  return Json{{"count", count}, {"sum", sum}};
}

}  // namespace

std::string StatsSummaryJson(const std::vector<MetricFamily>& families) {
  const MetricFamily* up = Family(families, "smallmind_worker_up");
  Json j{
      {"workers",
       {{"total", up == nullptr ? 0 : up->metric.size()},
        {"up", Sum(families, "smallmind_worker_up")}}},
      {"running", Sum(families, "smallmind_worker_running_sequences")},
      {"queue_depth", Sum(families, "smallmind_request_queue_depth")},
      {"kv_pages",
       {{"used", Sum(families, "smallmind_kv_pages_used")},
        {"capacity", Sum(families, "smallmind_kv_pages_capacity")},
        {"cached", Sum(families, "smallmind_kv_pages_cached")}}},
      {"requests", Requests(families)},
      {"tokens",
       {{"prompt", Sum(families, "smallmind_prompt_tokens_total")},
        {"generated", Sum(families, "smallmind_generation_tokens_total")}}},
      {"prefix_cache",
       {{"lookups", Sum(families, "smallmind_prefix_cache_lookups_total")},
        {"hits", Sum(families, "smallmind_prefix_cache_hits_total")}}},
      {"ttft", Histogram(families, "smallmind_time_to_first_token_seconds")},
  };
  return j.dump() + "\n";
}

}  // namespace smallmind::gateway::http
