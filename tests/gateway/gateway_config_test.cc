#include "gateway/gateway_config.h"

#include <vector>

#include <gtest/gtest.h>

namespace smallmind::gateway {
namespace {

shared::Result<GatewayConfig> Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "smallmind-gateway");
  return ParseGatewayFlags(static_cast<int>(args.size()), args.data());
}

TEST(GatewayConfigTest, DefaultsMatchTheDesign) {
  auto config = Parse({});
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->model, "builtin:tiny");
  EXPECT_EQ(config->workers, 2);
  EXPECT_EQ(config->port, 50051);
  EXPECT_EQ(config->listen_host, "0.0.0.0");
  EXPECT_TRUE(config->worker_endpoints.empty());
  EXPECT_TRUE(config->api_keys.empty());
  EXPECT_TRUE(config->Validate().ok());
}

TEST(GatewayConfigTest, ParsesSpacedAndEqualsFormsAndLists) {
  auto config = Parse({"--model", "m.gguf", "--workers=3", "--port", "0", "--cpus-per-worker=4",
                       "--worker-endpoints", "unix:/a.sock,,host:7000", "--api-keys=k1,k2",
                       "--worker-binary", "/opt/w"});
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->model, "m.gguf");
  EXPECT_EQ(config->workers, 3);
  EXPECT_EQ(config->port, 0);
  EXPECT_EQ(config->supervisor.cpus_per_worker, 4);
  EXPECT_EQ(config->worker_endpoints, (std::vector<std::string>{"unix:/a.sock", "host:7000"}));
  EXPECT_EQ(config->api_keys, (std::vector<std::string>{"k1", "k2"}));
  EXPECT_EQ(config->supervisor.worker_binary, "/opt/w");
}

TEST(GatewayConfigTest, BadFlagsAreErrorsThatNameTheFlag) {
  EXPECT_EQ(Parse({"--wrokers", "2"}).status().message(), "unknown flag '--wrokers'; see --help");
  EXPECT_EQ(Parse({"--workers"}).status().message(), "--workers needs a value");
  EXPECT_EQ(Parse({"--workers", "two"}).status().message(),
            "--workers expects an integer in [1, 1024], got 'two'");
  EXPECT_EQ(Parse({"--port=70000"}).status().message(),
            "--port expects an integer in [0, 65535], got '70000'");
}

TEST(GatewayConfigTest, ValidateRejectsInconsistentValues) {
  GatewayConfig config;
  config.workers = 0;
  EXPECT_EQ(config.Validate().message(), "--workers must be >= 1, got 0");
  config.workers = 1;
  config.model.clear();
  EXPECT_FALSE(config.Validate().ok());
  config.worker_endpoints = {"unix:/w.sock"};  // attached workers bring their own model
  EXPECT_TRUE(config.Validate().ok());
  config.api_keys = {"has space"};
  EXPECT_FALSE(config.Validate().ok());
}

TEST(GatewayConfigTest, SplitCommaListDropsEmptyPieces) {
  EXPECT_EQ(SplitCommaList(",a,,b,"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(SplitCommaList("").empty());
}

}  // namespace
}  // namespace smallmind::gateway
