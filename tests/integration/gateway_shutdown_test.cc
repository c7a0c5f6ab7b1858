// A real gateway stopped the way a service manager stops it (SIGTERM) exits 0 and leaves nothing
// in its runtime directory; the fixture that checks this after every gateway test reports a
// gateway that did not stop cleanly.
#include <signal.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/testing/rpc/gateway_fixture.h"

namespace smallmind {
namespace {

// Everything directly inside `dir`.
std::vector<std::filesystem::path> Entries(const std::string& dir) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path());
  return out;
}

TEST(GatewayShutdownTest, SigtermRemovesTheWorkerSocketDirectoryAndExitsZero) {
  testing::GatewayOptions options;
  options.workers = 2;
  auto gateway = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  const std::string runtime_dir = (*gateway)->runtime_dir();
  const std::vector<std::filesystem::path> made = Entries(runtime_dir);
  ASSERT_EQ(made.size(), 1u) << "one private socket directory per gateway";
  EXPECT_EQ(made[0].filename().string().rfind("smallmind-", 0), 0u) << made[0];
  EXPECT_TRUE(std::filesystem::exists(made[0] / "worker-0.sock"));
  EXPECT_TRUE(std::filesystem::exists(made[0] / "worker-1.sock"));
  const shared::Status stopped = (*gateway)->Stop();
  EXPECT_TRUE(stopped.ok()) << stopped.ToString();
  EXPECT_TRUE(Entries(runtime_dir).empty());
}

TEST(GatewayShutdownTest, FixtureReportsAGatewayThatDidNotStopCleanly) {
  auto gateway = testing::GatewayFixture::Start({});
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  (*gateway)->process().Signal(SIGKILL);  // no chance to clean up
  const shared::Status stopped = (*gateway)->Stop();
  EXPECT_FALSE(stopped.ok());
  EXPECT_NE(stopped.message().find("did not exit cleanly"), std::string::npos)
      << stopped.ToString();
}

}  // namespace
}  // namespace smallmind
