// The gateway's --metrics-port on a real gateway with real workers (issue 10 Done-when): after a
// few requests every DESIGN §6 name is served with live values, per worker where it is a worker's
// number, and a worker killed with SIGKILL shows as one restart of that worker.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "shared/worker_stat_table.h"
#include "tests/testing/http_get.h"
#include "tests/testing/prometheus_text.h"
#include "tests/testing/rpc/gateway_fixture.h"
#include "tests/testing/scoped_temp_dir.h"
#include "tests/testing/shared_data.h"
#include "tests/testing/test_models.h"

namespace smallmind {
namespace {

using std::chrono::milliseconds;

testing::MetricsText Scrape(int port) {
  auto response = testing::HttpGet("127.0.0.1", port, "/metrics");
  EXPECT_TRUE(response.ok()) << response.status().ToString();
  if (!response.ok()) return {};
  auto parsed = testing::ParseMetricsText(response->body);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return parsed.ok() ? *parsed : testing::MetricsText{};
}

double ValueOr(const testing::MetricsText& m, std::string_view name,
               const std::map<std::string, std::string>& labels = {}) {
  return m.Value(name, labels).value_or(-1);
}

// A 96-token prompt (6 KV blocks of 16), the same every call: a worker that sees it again finds
// its prefix cached.
v1::GenerateRequest Request(uint32_t max_tokens, uint64_t seed) {
  v1::GenerateRequest request;
  for (uint32_t i = 0; i < 96; ++i) request.mutable_prompt_token_ids()->add_ids(3 + (i * 7) % 200);
  request.mutable_stopping()->set_max_new_tokens(max_tokens);
  request.mutable_sampling()->set_seed(seed);
  return request;
}

TEST(GatewayMetricsTest, EveryDesignMetricIsLiveAndAKilledWorkerCountsOneRestart) {
  testing::GatewayOptions options;
  options.workers = 2;
  options.metrics = true;
  auto started = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  testing::GatewayFixture& gateway = **started;
  const int port = gateway.metrics_port();

  constexpr int kRequests = 6;
  double prompt_tokens = 0;  // as the worker counted them (BOS included)
  for (int i = 0; i < kRequests; ++i) {
    auto r = testing::RunGenerate(gateway.stub(), Request(12, 100 + i));
    ASSERT_TRUE(r.status.ok()) << i << ": " << r.status.error_message();
    ASSERT_NE(r.last(), nullptr);
    prompt_tokens += r.last()->usage().prompt_tokens();
  }
  ASSERT_GE(prompt_tokens, kRequests * 96);
  v1::GenerateRequest bad;
  bad.mutable_stopping()->set_max_new_tokens(4);  // no prompt: INVALID_ARGUMENT
  EXPECT_EQ(testing::RunGenerate(gateway.stub(), bad).status.error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);

  // The worker numbers are the workers' last Stats answers, polled in the background: scrape
  // (bounded) until they include the requests above.
  testing::MetricsText m;
  const auto worker_tokens = [](const testing::MetricsText& text) {
    double sum = 0;
    for (const auto& sample : text.Samples("smallmind_worker_generation_tokens_total")) {
      sum += sample.value;
    }
    return sum;
  };
  for (int attempt = 0; attempt < 100; ++attempt) {
    m = Scrape(port);
    if (worker_tokens(m) >= kRequests * 12) break;
    std::this_thread::sleep_for(milliseconds(100));
  }
  double pages_total = 0, hits = 0;
  for (const std::string worker : {"0", "1"}) {
    const std::map<std::string, std::string> w = {{"worker", worker}};
    EXPECT_EQ(ValueOr(m, "smallmind_worker_up", w), 1) << worker;
    EXPECT_EQ(ValueOr(m, "smallmind_worker_restarts_total", w), 0) << worker;
    EXPECT_GE(ValueOr(m, "smallmind_kv_pages_used", w), 0) << worker;
    pages_total += ValueOr(m, "smallmind_kv_pages_capacity", w);
    hits += ValueOr(m, "smallmind_prefix_cache_hits_total", w);
  }
  EXPECT_GT(pages_total, 0);
  // Every row of the worker stat table reaches /metrics, per worker, with its kind.
  for (const shared::WorkerStatDescriptor& d : shared::kWorkerStatTable) {
    const std::string name(d.name);
    EXPECT_EQ(m.types[name], d.kind == shared::StatKind::kCounter ? "counter" : "gauge") << name;
    for (const std::string worker : {"0", "1"}) {
      EXPECT_TRUE(m.Value(name, {{"worker", worker}}).has_value()) << name << " worker " << worker;
    }
  }
  // 6 requests with one prompt on 2 workers: one of them saw it at least twice.
  EXPECT_GE(hits, 1) << "the repeated prompt's prefix was not reused";
  EXPECT_EQ(worker_tokens(m), kRequests * 12);

  // Kill worker 0 (its pid from its own Stats) and wait, bounded, until the gateway reports it
  // back and up.
  auto stats = gateway.WorkerStats(0);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  ASSERT_GT(stats->pid(), 0u);
  ASSERT_EQ(kill(static_cast<pid_t>(stats->pid()), SIGKILL), 0);
  testing::MetricsText after;
  for (int attempt = 0; attempt < 300; ++attempt) {
    after = Scrape(port);
    if (ValueOr(after, "smallmind_worker_restarts_total", {{"worker", "0"}}) >= 1 &&
        ValueOr(after, "smallmind_worker_up", {{"worker", "0"}}) == 1) {
      break;
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_EQ(ValueOr(after, "smallmind_worker_restarts_total", {{"worker", "0"}}), 1);
  EXPECT_EQ(ValueOr(after, "smallmind_worker_up", {{"worker", "0"}}), 1);
  EXPECT_EQ(ValueOr(after, "smallmind_worker_restarts_total", {{"worker", "1"}}), 0);
  // The gateway's own counters survive the worker.
  EXPECT_EQ(ValueOr(after, "smallmind_requests_total", {{"status", "OK"}}), kRequests);
}

// `promtool check metrics` (Debian's prometheus package; scripts/install_deps.sh installs it) on
// `body`: its exit status and what it printed.
struct PromtoolResult {
  int status = -1;
  std::string output;
};
std::optional<PromtoolResult> Promtool(const std::string& body) {
  if (std::system("command -v promtool > /dev/null 2>&1") != 0) return std::nullopt;
  const testing::ScopedTempDir dir("promtool");
  const std::string file = dir.File("metrics.txt");
  std::ofstream(file) << body;
  FILE* pipe = ::popen(("promtool check metrics < " + file + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  PromtoolResult result;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;)
    result.output.append(buffer, n);
  result.status = ::pclose(pipe);
  return result;
}

TEST(GatewayMetricsTest, ALiveScrapePassesPromtoolCheckMetrics) {
  if (std::system("command -v promtool > /dev/null 2>&1") != 0) {
    if (testing::InCi()) GTEST_FAIL() << "promtool not found (apt-get install prometheus)";
    GTEST_SKIP() << "promtool not found (apt-get install prometheus); set CI=true to fail";
  }
  testing::GatewayOptions options;
  options.workers = 1;
  options.metrics = true;
  auto started = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  testing::GatewayFixture& gateway = **started;
  const int port = gateway.metrics_port();
  ASSERT_TRUE(testing::RunGenerate(gateway.stub(), Request(4, 1)).status.ok());
  auto response = testing::HttpGet("127.0.0.1", port, "/metrics");
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_NE(response->body.find("model_name=\""), std::string::npos) << "vLLM's label";
  EXPECT_NE(response->body.find("smallmind_e2e_request_latency_seconds_count"), std::string::npos);
  const std::optional<PromtoolResult> checked = Promtool(response->body);
  ASSERT_TRUE(checked.has_value()) << "promtool could not run";
  EXPECT_EQ(checked->status, 0) << checked->output << "\n" << response->body;
  EXPECT_EQ(checked->output, "") << "promtool's lint findings:\n" << checked->output;
}

// Issue 40: every client cancel is counted as CANCELLED (about half were counted as OK). Each
// stream is cancelled after its first message, long before its 4000 tokens could end it.
TEST(GatewayMetricsTest, EveryClientCancelCountsAsCancelled) {
  const testing::ScopedTempDir models;  // outlives the gateway that maps the file
  testing::GatewayOptions options;
  options.model = testing::LongContextTinyModel(models);
  ASSERT_FALSE(options.model.empty()) << "smallmind-modelgen failed";
  options.metrics = true;
  auto started = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  testing::GatewayFixture& gateway = **started;
  const int port = gateway.metrics_port();

  constexpr int kCancels = 24;
  for (int i = 0; i < kCancels; ++i) {
    grpc::ClientContext ctx;
    v1::GenerateRequest request = Request(4000, 500 + i);
    request.mutable_stopping()->set_ignore_eos(true);
    auto reader = gateway.stub().Generate(&ctx, request);
    v1::GenerateResponse msg;
    ASSERT_TRUE(reader->Read(&msg)) << i;
    ASSERT_EQ(msg.finish_reason(), v1::FINISH_REASON_UNSPECIFIED) << i;
    ctx.TryCancel();
    for (int more = 0; more < 4000 && reader->Read(&msg); ++more) {
    }
    ASSERT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED) << i;
  }
  // The gateway counts a request when its worker call has ended too: scrape (bounded) until all
  // are in.
  testing::MetricsText m;
  for (int attempt = 0; attempt < 100; ++attempt) {
    m = Scrape(port);
    if (ValueOr(m, "smallmind_requests_total", {{"status", "CANCELLED"}}) +
            std::max(0.0, ValueOr(m, "smallmind_requests_total", {{"status", "OK"}})) >=
        kCancels) {
      break;
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_EQ(ValueOr(m, "smallmind_requests_total", {{"status", "CANCELLED"}}), kCancels);
  EXPECT_LE(ValueOr(m, "smallmind_requests_total", {{"status", "OK"}}), 0);
}

}  // namespace
}  // namespace smallmind
