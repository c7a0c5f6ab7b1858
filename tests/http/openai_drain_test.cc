// SIGTERM's drain as the official openai client sees it (openai_drain_check.mjs): an open stream
// gets finish_reason "abort" for each choice and an error event, a whole request a 503, and the
// gateway still exits cleanly.
#include <gtest/gtest.h>

#include <string>

#include "tests/http/node_client.h"
#include "tests/testing/rpc/gateway_fixture.h"
#include "tests/testing/scoped_temp_dir.h"
#include "tests/testing/test_models.h"

namespace smallmind {
namespace {

TEST(HttpDrainTest, DrainEndsOpenStreamsWithAFinalChunkTheOfficialClientParses) {
  SM_REQUIRE_NODE();
  const testing::ScopedTempDir models;  // outlives the gateway that maps the file
  testing::GatewayOptions options;
  options.model = testing::LongContextTinyModel(models);
  ASSERT_FALSE(options.model.empty()) << "smallmind-modelgen failed";
  options.http = true;
  options.extra_args = {"--drain-seconds", "0"};
  auto gateway = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  EXPECT_EQ(testing::RunNode("openai_drain_check.mjs",
                             {"--base-url", (*gateway)->http_address() + "/v1", "--model",
                              testing::ServedName(options.model), "--gateway-pid",
                              std::to_string((*gateway)->process().pid())}),
            0);
  EXPECT_TRUE((*gateway)->Stop().ok()) << (*gateway)->Stop().ToString();
}

}  // namespace
}  // namespace smallmind
