// deploy/grafana/dashboards/*.json against what the gateway exposes: valid JSON, and every metric
// (and label) an expression names is one /metrics serves, so a renamed metric breaks this test
// instead of a panel. Also: every DESIGN §6 name has a panel.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <nlohmann/json.hpp>

#include "gateway/metrics/request_metrics.h"
#include "gateway/metrics/worker_metrics.h"
#include "tests/testing/prometheus_text.h"

namespace smallmind::gateway {
namespace {

const std::filesystem::path kDashboards =
    std::filesystem::path(SMALLMIND_SOURCE_DIR) / "deploy/grafana/dashboards";

// Sample name -> label names, as the gateway exposes them (one worker that answered its Stats).
std::map<std::string, std::set<std::string>> ExposedSeries() {
  prometheus::Registry registry;
  RequestMetrics requests(registry);
  WorkerSnapshot worker;
  worker.healthy = true;
  worker.stats = v1::WorkerStats();
  std::vector<prometheus::MetricFamily> families = registry.Collect();
  for (auto& family : WorkerFamilies({&worker, 1}, 0)) families.push_back(std::move(family));
  auto text = testing::ParseMetricsText(prometheus::TextSerializer().Serialize(families));
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  std::map<std::string, std::set<std::string>> out;
  if (!text.ok()) return out;
  for (const auto& sample : text->samples) {
    auto& labels = out[sample.name];
    for (const auto& [name, value] : sample.labels) labels.insert(name);
  }
  return out;
}

// Every "expr" of every panel (rows nest their panels).
void CollectExprs(const nlohmann::json& panels, std::vector<std::string>& out) {
  for (const auto& panel : panels) {
    if (panel.contains("panels")) CollectExprs(panel["panels"], out);
    if (!panel.contains("targets")) continue;
    for (const auto& target : panel["targets"]) {
      if (target.contains("expr")) out.push_back(target["expr"].get<std::string>());
    }
  }
}

std::vector<std::filesystem::path> DashboardFiles() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(kDashboards)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  return files;
}

TEST(GrafanaDashboardTest, EveryExpressionNamesExposedMetricsAndLabels) {
  const auto exposed = ExposedSeries();
  ASSERT_FALSE(exposed.empty());
  const std::regex metric_re(R"((smallmind_[A-Za-z0-9_]+)(\{([^}]*)\})?)");
  const std::regex label_re(R"(([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=))");
  const std::vector<std::filesystem::path> files = DashboardFiles();
  ASSERT_FALSE(files.empty()) << "no dashboard in " << kDashboards;
  for (const auto& file : files) {
    std::ifstream in(file);
    const nlohmann::json dashboard = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(dashboard.is_discarded()) << file << " is not valid JSON";
    std::vector<std::string> exprs;
    CollectExprs(dashboard.at("panels"), exprs);
    ASSERT_GE(exprs.size(), 10u) << file;
    for (const std::string& expr : exprs) {
      int metrics = 0;
      for (std::sregex_iterator it(expr.begin(), expr.end(), metric_re), end; it != end; ++it) {
        ++metrics;
        const std::string name = (*it)[1];
        auto series = exposed.find(name);
        ASSERT_NE(series, exposed.end()) << file << ": " << name << " is not exposed, in " << expr;
        const std::string selector = (*it)[3];
        for (std::sregex_iterator l(selector.begin(), selector.end(), label_re), lend; l != lend;
             ++l) {
          EXPECT_TRUE(series->second.count((*l)[1]))
              << file << ": " << name << " has no label " << (*l)[1] << ", in " << expr;
        }
      }
      EXPECT_GT(metrics, 0) << file << ": an expression without a smallmind metric: " << expr;
    }
  }
}

TEST(GrafanaDashboardTest, EveryDesignMetricHasAPanel) {
  std::string all;
  for (const auto& file : DashboardFiles()) {
    std::ifstream in(file);
    std::vector<std::string> exprs;
    CollectExprs(nlohmann::json::parse(in).at("panels"), exprs);
    for (const auto& e : exprs) all += e + "\n";
  }
  for (const char* name :
       {"smallmind_requests_total", "smallmind_request_queue_depth",
        "smallmind_time_to_first_token_seconds_bucket",
        "smallmind_inter_token_latency_seconds_bucket", "smallmind_prompt_tokens_total",
        "smallmind_generation_tokens_total", "smallmind_kv_pages_used",
        "smallmind_kv_pages_capacity", "smallmind_prefix_cache_hits_total",
        "smallmind_worker_restarts_total"}) {
    EXPECT_NE(all.find(name), std::string::npos) << name << " is on no panel";
  }
  EXPECT_NE(all.find("histogram_quantile(0.99, sum by (le) "
                     "(rate(smallmind_inter_token_latency_seconds_bucket"),
            std::string::npos);
}

}  // namespace
}  // namespace smallmind::gateway
