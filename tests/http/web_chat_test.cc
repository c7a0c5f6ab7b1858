// The web chat at / (gateway/http/web) of a real gateway + worker: its files and headers and the
// /stats digest over raw HTTP, then the page itself in Debian's headless Chromium
// (web_chat_check.mjs through puppeteer-core): key prompt, a streamed reply, Stop cancelling a
// long one on the worker, the server panel, a screenshot in the test's build folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "shared/worker_stat_table.h"
#include "tests/http/http_client.h"
#include "tests/http/node_client.h"
#include "tests/testing/rpc/gateway_fixture.h"
#include "tests/testing/scoped_temp_dir.h"
#include "tests/testing/shared_data.h"
#include "tests/testing/test_models.h"

namespace smallmind {
namespace {

using testing::HttpCall;
using testing::HttpReply;

constexpr char kChromium[] = "/usr/bin/chromium";  // Debian's package (scripts/install_deps.sh)
constexpr char kKey[] = "web-key";

std::string Header(const HttpReply& r, const char* name) {
  auto it = r.headers.find(name);
  return it == r.headers.end() ? "" : std::string(it->value());
}

TEST(WebChatTest, ServesThePageScriptAndStyleWithStrictHeadersWithoutAKey) {
  testing::GatewayOptions options;
  options.http = true;
  options.api_key = kKey;
  auto gateway = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  const std::string base = (*gateway)->http_address();
  for (const auto& [path, type, marker] :
       {std::tuple{"/", "text/html; charset=utf-8", "<script src=\"/chat.js\""},
        std::tuple{"/chat.js", "text/javascript; charset=utf-8", "/v1/chat/completions"},
        std::tuple{"/chat.css", "text/css; charset=utf-8", "#log"}}) {
    const HttpReply r = HttpCall(base, "GET", path);
    ASSERT_EQ(r.status, 200) << path << ": " << r.body;
    EXPECT_EQ(Header(r, "Content-Type"), type) << path;
    EXPECT_NE(r.body.find(marker), std::string::npos) << path;
    const std::string csp = Header(r, "Content-Security-Policy");
    EXPECT_NE(csp.find("default-src 'none'"), std::string::npos) << csp;
    EXPECT_EQ(csp.find("unsafe"), std::string::npos) << csp;
    EXPECT_EQ(Header(r, "X-Content-Type-Options"), "nosniff");
    EXPECT_EQ(Header(r, "Cache-Control"), "no-cache");
    const std::string etag = Header(r, "ETag");
    ASSERT_FALSE(etag.empty()) << path;
    const HttpReply again = HttpCall(base, "GET", path, "", {{"If-None-Match", etag}});
    EXPECT_EQ(again.status, 304) << path;
    EXPECT_TRUE(again.body.empty());
  }
  EXPECT_EQ(HttpCall(base, "POST", "/", "{}").status, 405);
  // The API behind the page still wants the key.
  EXPECT_EQ(HttpCall(base, "GET", "/v1/models").status, 401);
}

TEST(WebChatTest, StatsDigestsTheMetricsAsJson) {
  testing::GatewayOptions options;
  options.http = true;
  auto gateway = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  const std::string base = (*gateway)->http_address();
  ASSERT_EQ(HttpCall(base, "POST", "/v1/completions", R"({"prompt":"hi","max_tokens":3})").status,
            200);
  const HttpReply r = HttpCall(base, "GET", "/stats");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Header(r, "Content-Type"), "application/json");
  const nlohmann::json s = r.json();
  EXPECT_EQ(s["workers"]["total"], 1) << r.body;
  EXPECT_EQ(s["requests"]["OK"], 1) << r.body;
  EXPECT_EQ(s["requests"]["failed"], 0) << r.body;
  EXPECT_EQ(s["tokens"]["generated"], 3) << r.body;
  EXPECT_EQ(s["ttft"]["count"], 1) << r.body;
  EXPECT_GT(s["kv_pages"]["capacity"].get<uint64_t>(), 0u) << r.body;
  EXPECT_EQ(s["running"], 0) << r.body;
  EXPECT_EQ(HttpCall(base, "POST", "/stats", "{}").status, 405);
}

// Why the browser test cannot run here ("" = it can).
std::string BrowserMissing() {
  if (std::string node = testing::NodeMissing(); !node.empty()) return node;
  if (!std::filesystem::exists(testing::kHttpTestsDir + "/node_modules/puppeteer-core")) {
    return "tests/http/node_modules lacks puppeteer-core: run scripts/install_deps.sh";
  }
  if (!std::filesystem::exists(kChromium)) {
    return std::string(kChromium) + " is missing (Debian's chromium; scripts/install_deps.sh)";
  }
  return "";
}

TEST(WebChatBrowserTest, HeadlessChromiumStreamsAReplyAndStopCancelsTheNextOne) {
  if (const std::string missing = BrowserMissing(); !missing.empty()) {
    if (testing::InCi()) FAIL() << missing;
    GTEST_SKIP() << missing;
  }
  const testing::ScopedTempDir models;  // outlives the gateway that maps the file
  testing::GatewayOptions options;
  options.model = testing::LongContextTinyModel(models);
  ASSERT_FALSE(options.model.empty()) << "smallmind-modelgen failed";
  options.http = true;
  options.api_key = kKey;
  auto gateway = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  // In the test's build folder (ctest's working directory), kept for a person to look at.
  const std::string screenshot = (std::filesystem::current_path() / "web_chat.png").string();
  std::filesystem::remove(screenshot);
  EXPECT_EQ(testing::RunNode("web_chat_check.mjs",
                             {"--url", (*gateway)->http_address(), "--api-key", kKey, "--chromium",
                              kChromium, "--screenshot", screenshot}),
            0);
  EXPECT_TRUE(std::filesystem::exists(screenshot)) << screenshot;

  // The stopped reply left nothing behind on the worker, and the gateway counted it CANCELLED.
  const shared::Result<v1::WorkerStats> idle = (*gateway)->WaitForIdleWorker(0);
  ASSERT_TRUE(idle.ok()) << idle.status().ToString();
  EXPECT_EQ(shared::ReadWorkerStat(idle->values(), shared::WorkerStat::kRunning), 0u);
  EXPECT_EQ(shared::ReadWorkerStat(idle->values(), shared::WorkerStat::kKvPagesUsed), 0u);
  const HttpReply stats = HttpCall((*gateway)->http_address(), "GET", "/stats");
  EXPECT_GE(stats.json()["requests"]["CANCELLED"].get<uint64_t>(), 1u) << stats.body;
  EXPECT_LT(stats.json()["tokens"]["generated"].get<uint64_t>(), 6000u + 12u) << stats.body;
}

}  // namespace
}  // namespace smallmind
