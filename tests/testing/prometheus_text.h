// Reads the Prometheus text exposition format (version 0.0.4) back into samples, so tests can
// check what a /metrics endpoint serves by name and labels. Pure functions; thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shared/status.h"

namespace smallmind::testing {

struct MetricSample {
  std::string name;  // as written, e.g. smallmind_ttft_seconds_bucket
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct MetricsText {
  std::vector<MetricSample> samples;
  std::map<std::string, std::string> types;  // family name -> counter | gauge | histogram | ...

  // The value of the sample named `name` whose labels include every pair of `labels`; nullopt
  // when none, or when several match.
  std::optional<double> Value(std::string_view name,
                              const std::map<std::string, std::string>& labels = {}) const;
  // Every sample named `name`.
  std::vector<MetricSample> Samples(std::string_view name) const;
};

// INVALID_ARGUMENT naming the line that does not parse.
shared::Result<MetricsText> ParseMetricsText(std::string_view text);

}  // namespace smallmind::testing
