// --worker-endpoints entries: which are fixed targets and which are DNS names, what is refused, and
// how WorkerEndpoints keeps a name's addresses when a lookup fails.
#include "gateway/workers/worker_endpoints.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gateway/gateway_config.h"

namespace smallmind::gateway {
namespace {

TEST(WorkerEndpointsTest, FixedTargetsAndNamesAreTold) {
  auto unix_socket = ParseWorkerEndpoint("unix:/run/w0.sock");
  ASSERT_TRUE(unix_socket.ok()) << unix_socket.status().ToString();
  EXPECT_FALSE(unix_socket->is_name());
  EXPECT_EQ(unix_socket->target, "unix:/run/w0.sock");

  auto v4 = ParseWorkerEndpoint("10.0.0.7:50061");
  ASSERT_TRUE(v4.ok());
  EXPECT_FALSE(v4->is_name());
  EXPECT_EQ(v4->target, "10.0.0.7:50061");

  auto v6 = ParseWorkerEndpoint("[fd00::7]:50061");
  ASSERT_TRUE(v6.ok()) << v6.status().ToString();
  EXPECT_FALSE(v6->is_name());
  EXPECT_EQ(v6->target, "[fd00::7]:50061");

  auto name = ParseWorkerEndpoint("smallmind-worker.default.svc.cluster.local:50061");
  ASSERT_TRUE(name.ok());
  EXPECT_TRUE(name->is_name());
  EXPECT_EQ(name->host, "smallmind-worker.default.svc.cluster.local");
  EXPECT_EQ(name->port, 50061);
  EXPECT_TRUE(ParseWorkerEndpoint("worker-0:50061")->is_name());
}

TEST(WorkerEndpointsTest, EntriesThatAreNoAddressAreRefusedNamingThem) {
  for (const char* bad : {"worker", "worker:", "worker:0", "worker:65536", "worker:50x", "::1:5",
                          "[::1]5", "[nope]:5", "bad host:5", ":5", "unix:", "-a:5"}) {
    SCOPED_TRACE(bad);
    auto parsed = ParseWorkerEndpoint(bad);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().code(), shared::StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find(std::string("'") + bad + "'"), std::string::npos)
        << parsed.status().message();
  }
}

TEST(WorkerEndpointsTest, GatewayConfigRefusesABadEntry) {
  GatewayConfig config;
  config.worker_endpoints = {"unix:/w.sock", "worker-1"};
  const shared::Status status = config.Validate();
  EXPECT_EQ(status.code(), shared::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("worker-1"), std::string::npos) << status.message();
  config.worker_endpoints = {"unix:/w.sock", "worker-1:50061"};
  EXPECT_TRUE(config.Validate().ok());
}

TEST(WorkerEndpointsTest, SystemResolverFindsLocalhostOnLoopback) {
  auto addresses = ResolveHostWithSystem("localhost");
  ASSERT_TRUE(addresses.ok()) << addresses.status().ToString();
  ASSERT_FALSE(addresses->empty());
  for (const std::string& a : *addresses) {
    EXPECT_TRUE(a.rfind("127.", 0) == 0 || a == "::1") << a;
  }
  EXPECT_TRUE(std::is_sorted(addresses->begin(), addresses->end()));
}

TEST(WorkerEndpointsTest, NamesExpandInOrderAndEachTargetComesOnce) {
  std::map<std::string, std::vector<std::string>> dns = {{"b.test", {"10.0.0.2", "fd00::2"}},
                                                         {"a.test", {"10.0.0.1", "10.0.0.2"}}};
  int lookups = 0;
  WorkerEndpoints endpoints(
      {"b.test:7000", "unix:/w.sock", "a.test:7000", "10.0.0.1:7000"},
      [&](const std::string& host) -> shared::Result<std::vector<std::string>> {
        ++lookups;
        return dns.at(host);
      });
  EXPECT_TRUE(endpoints.has_names());
  EXPECT_EQ(endpoints.Resolve(), (std::vector<std::string>{"10.0.0.2:7000", "[fd00::2]:7000",
                                                           "unix:/w.sock", "10.0.0.1:7000"}));
  EXPECT_EQ(lookups, 2) << "one lookup per name, none for fixed targets";
}

TEST(WorkerEndpointsTest, FailedLookupKeepsTheLastAddressesAndNxdomainDropsThem) {
  shared::Result<std::vector<std::string>> answer =
      std::vector<std::string>{"10.0.0.1", "10.0.0.2"};
  WorkerEndpoints endpoints({"w.test:7000"}, [&](const std::string&) { return answer; });
  const std::vector<std::string> two = {"10.0.0.1:7000", "10.0.0.2:7000"};
  EXPECT_EQ(endpoints.Resolve(), two);
  answer = shared::Unavailable("no DNS server answered");
  EXPECT_EQ(endpoints.Resolve(), two) << "a failed lookup says nothing about the workers";
  answer = std::vector<std::string>{};
  EXPECT_TRUE(endpoints.Resolve().empty()) << "a name with no address has no workers";
  answer = std::vector<std::string>{"10.0.0.3"};
  EXPECT_EQ(endpoints.Resolve(), std::vector<std::string>{"10.0.0.3:7000"});
}

TEST(WorkerEndpointsTest, FixedTargetsNeverLookAnythingUp) {
  int lookups = 0;
  WorkerEndpoints endpoints({"unix:/a.sock", "127.0.0.1:7000", "[::1]:7000"},
                            [&](const std::string&) -> shared::Result<std::vector<std::string>> {
                              ++lookups;
                              return std::vector<std::string>{};
                            });
  EXPECT_FALSE(endpoints.has_names());
  EXPECT_EQ(endpoints.Resolve(),
            (std::vector<std::string>{"unix:/a.sock", "127.0.0.1:7000", "[::1]:7000"}));
  EXPECT_EQ(lookups, 0);
}

}  // namespace
}  // namespace smallmind::gateway
