// Every template in ../shared/chat-templates renders byte-identical through POST /apply-template of
// a gateway serving it with --chat-template and the date pinned to 2026-01-15 (cases.jsonl; the
// lines the template refuses come back as 400 with the template's message).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tests/http/http_client.h"
#include "tests/testing/rpc/gateway_fixture.h"
#include "tests/testing/shared_data.h"

namespace smallmind {
namespace {

TEST(ApplyTemplateConformanceTest, EverySharedTemplateRendersTheExpectedBytes) {
  SM_REQUIRE_SHARED_DATA("chat-templates/cases.jsonl");
  const std::string dir = testing::SharedDataPath("chat-templates");
  std::map<std::string, std::vector<nlohmann::json>> cases;  // by template file
  std::ifstream in(dir + "/cases.jsonl");
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) {
      const auto j = nlohmann::json::parse(line);
      cases[j["template"].get<std::string>()].push_back(j);
    }
  }
  ASSERT_EQ(cases.size(), 6u);
  int rendered = 0, refused = 0;
  for (const auto& [file, lines] : cases) {
    testing::GatewayOptions options;
    options.http = true;
    options.extra_args = {"--chat-template", dir + "/" + file, "--chat-template-date",
                          "2026-01-15"};
    auto gateway = testing::GatewayFixture::Start(options);
    ASSERT_TRUE(gateway.ok()) << file << ": " << gateway.status().ToString();
    for (const nlohmann::json& c : lines) {
      const std::string where = file + " case " + c["case"].get<std::string>();
      nlohmann::json body{{"messages", c["messages"]},
                          {"add_generation_prompt", c["add_generation_prompt"]},
                          {"bos_token", c["bos_token"]},
                          {"eos_token", c["eos_token"]}};
      const testing::HttpReply r =
          testing::HttpCall((*gateway)->http_address(), "POST", "/apply-template", body.dump());
      ASSERT_TRUE(r.ok) << where << ": " << r.error;
      if (c.contains("expected")) {
        ASSERT_EQ(r.status, 200) << where << ": " << r.body;
        EXPECT_EQ(r.json()["prompt"], c["expected"]) << where;
        ++rendered;
      } else {
        ASSERT_EQ(r.status, 400) << where << ": " << r.body;
        EXPECT_EQ(r.json()["error"]["message"], c["skipped"]) << where;
        ++refused;
      }
    }
  }
  EXPECT_EQ(rendered, 27);
  EXPECT_EQ(refused, 3);
}

}  // namespace
}  // namespace smallmind
