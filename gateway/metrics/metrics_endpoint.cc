#include "gateway/metrics/metrics_endpoint.h"

#include <exception>
#include <utility>
#include <vector>

#include <spdlog/fmt/fmt.h>

namespace smallmind::gateway {
namespace {

constexpr size_t kHttpThreads = 2;  // scrapes are rare; one spare for a slow client

}  // namespace

shared::Result<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const std::string& host, int port, std::shared_ptr<GatewayMetrics> metrics) {
  const bool bare_ipv6 = host.find(':') != std::string::npos && host.front() != '[';
  const std::string address =
      bare_ipv6 ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    exposer = std::make_unique<prometheus::Exposer>(address, kHttpThreads);
  } catch (const std::exception& e) {
    return shared::Unavailable(
        fmt::format("cannot serve metrics on {} (address in use?): {}", address, e.what()));
  }
  const std::vector<int> ports = exposer->GetListeningPorts();
  if (ports.empty()) return shared::Unavailable("metrics listener on " + address + " has no port");
  exposer->RegisterCollectable(metrics);
  return std::unique_ptr<MetricsEndpoint>(
      new MetricsEndpoint(std::move(exposer), std::move(metrics), ports.front()));
}

MetricsEndpoint::MetricsEndpoint(std::unique_ptr<prometheus::Exposer> exposer,
                                 std::shared_ptr<GatewayMetrics> metrics, int port)
    : metrics_(std::move(metrics)), exposer_(std::move(exposer)), port_(port) {}

}  // namespace smallmind::gateway
