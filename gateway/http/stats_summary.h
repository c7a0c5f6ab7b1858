// StatsSummary: GET /stats, a small JSON digest of the gateway's metrics (the families that
// --metrics-port and GET /metrics serve as Prometheus text) for the web chat's server panel and
// any script that wants a few numbers without a Prometheus parser. Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include <prometheus/metric_family.h>

namespace smallmind::gateway::http {

// {"workers": {"total", "up"}, "running", "queue_depth", "kv_pages": {"used", "capacity",
// "cached"}, "requests": {"<gRPC status name>": n, ..., "failed": n (neither OK nor CANCELLED)},
// "tokens": {"prompt", "generated"}, "prefix_cache": {"lookups", "hits"}, "ttft": {"count",
// "sum" (seconds)}}, every number summed over the workers' series; one line of JSON.
std::string StatsSummaryJson(const std::vector<prometheus::MetricFamily>& families);

}  // namespace smallmind::gateway::http
