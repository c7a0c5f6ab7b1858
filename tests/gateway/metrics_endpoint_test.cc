// MetricsEndpoint over real HTTP: what GatewayMetrics renders is what GET /metrics answers, a busy
// port is refused, and a gateway started with a metrics port shows its workers there.
#include "gateway/metrics/metrics_endpoint.h"

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "gateway/gateway.h"
#include "tests/gateway/fake_worker.h"
#include "tests/testing/http_get.h"
#include "tests/testing/prometheus_text.h"
#include "tests/testing/scoped_temp_dir.h"

namespace smallmind::gateway {
namespace {

smallmind::testing::MetricsText Get(int port) {
  auto response = smallmind::testing::HttpGet("127.0.0.1", port, "/metrics");
  EXPECT_TRUE(response.ok()) << response.status().ToString();
  if (!response.ok()) return {};
  EXPECT_EQ(response->status, 200);
  EXPECT_NE(response->content_type.find("text/plain"), std::string::npos);
  auto parsed = smallmind::testing::ParseMetricsText(response->body);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return parsed.ok() ? *parsed : smallmind::testing::MetricsText{};
}

TEST(MetricsEndpointTest, ServesWhatTheMetricsRender) {
  auto metrics = std::make_shared<GatewayMetrics>();
  metrics->requests().ObserveFinished(shared::StatusCode::kOk, 5);
  auto endpoint = MetricsEndpoint::Start("127.0.0.1", 0, metrics);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status().ToString();
  ASSERT_GT((*endpoint)->port(), 0);
  const smallmind::testing::MetricsText served = Get((*endpoint)->port());
  EXPECT_EQ(served.Value("smallmind_requests_total", {{"status", "OK"}}), 1.0);
  EXPECT_EQ(served.types.at("smallmind_time_to_first_token_seconds"), "histogram");
  // The exposer adds its own exposer_* families; everything rendered is served as rendered.
  auto rendered = smallmind::testing::ParseMetricsText(metrics->RenderText());
  ASSERT_TRUE(rendered.ok());
  ASSERT_FALSE(rendered->samples.empty());
  for (const auto& sample : rendered->samples) {
    EXPECT_EQ(served.Value(sample.name, sample.labels), sample.value) << sample.name;
  }
}

TEST(MetricsEndpointTest, ABusyPortIsRefusedNamingTheAddress) {
  auto metrics = std::make_shared<GatewayMetrics>();
  auto first = MetricsEndpoint::Start("127.0.0.1", 0, metrics);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const int port = (*first)->port();
  auto second = MetricsEndpoint::Start("127.0.0.1", port, metrics);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), shared::StatusCode::kUnavailable);
  EXPECT_NE(second.status().message().find("127.0.0.1:" + std::to_string(port)), std::string::npos)
      << second.status().message();
}

TEST(MetricsEndpointTest, AGatewayShowsItsAttachedWorkersOnItsMetricsPort) {
  smallmind::testing::ScopedTempDir tmp;
  testing::FakeWorker worker(0, tmp.File("w0.sock"));
  ASSERT_TRUE(worker.started());
  GatewayConfig config;
  config.worker_endpoints = {worker.target()};
  config.listen_host = "127.0.0.1";
  config.port = 0;
  config.metrics_port = 0;
  Gateway gateway(config);
  const shared::Status status = gateway.Start();
  ASSERT_TRUE(status.ok()) << status.ToString();
  ASSERT_GT(gateway.metrics_port(), 0);
  const smallmind::testing::MetricsText m = Get(gateway.metrics_port());
  EXPECT_EQ(m.Value("smallmind_worker_up", {{"worker", "0"}}), 1.0);
  EXPECT_EQ(m.Value("smallmind_worker_restarts_total", {{"worker", "0"}}), 0.0);
  EXPECT_EQ(m.Value("smallmind_kv_pages_capacity", {{"worker", "0"}}), 0.0);
  EXPECT_EQ(m.Value("smallmind_request_queue_depth"), 0.0);
  gateway.Shutdown();
  worker.Shutdown();
  EXPECT_FALSE(smallmind::testing::HttpGet("127.0.0.1", gateway.metrics_port(), "/metrics").ok())
      << "the endpoint stops with the gateway";
}

TEST(MetricsEndpointTest, AGatewayWithoutAMetricsPortListensOnNone) {
  smallmind::testing::ScopedTempDir tmp;
  testing::FakeWorker worker(0, tmp.File("w0.sock"));
  GatewayConfig config;
  config.worker_endpoints = {worker.target()};
  config.listen_host = "127.0.0.1";
  config.port = 0;
  Gateway gateway(config);
  ASSERT_TRUE(gateway.Start().ok());
  EXPECT_EQ(gateway.metrics_port(), -1);
  gateway.Shutdown();
  worker.Shutdown();
}

}  // namespace
}  // namespace smallmind::gateway
