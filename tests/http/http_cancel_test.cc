// A client that disconnects mid-stream: its worker request is cancelled and its KV blocks freed
// within a step, asked of the worker itself (Stats over its socket), as the gRPC cancel test does.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>

#include "shared/worker_stat_table.h"
#include "tests/http/http_client.h"
#include "tests/testing/http_get.h"
#include "tests/testing/prometheus_text.h"
#include "tests/testing/rpc/gateway_fixture.h"
#include "tests/testing/scoped_temp_dir.h"
#include "tests/testing/test_models.h"

namespace smallmind {
namespace {

namespace net = boost::asio;
using std::chrono::milliseconds;

// Sends `body` to `target` and leaves once `until` arrived (the request runs on the worker).
void PostAndLeave(const std::string& base, const std::string& target, const std::string& body,
                  const std::string& until) {
  net::io_context io;
  net::ip::tcp::resolver resolver(io);
  net::ip::tcp::socket socket(io);
  auto [host, port] = testing::HostPort(base);
  net::connect(socket, resolver.resolve(host, port));
  net::write(socket, net::buffer("POST " + target + " HTTP/1.1\r\nHost: t\r\nContent-Length: " +
                                 std::to_string(body.size()) + "\r\n\r\n" + body));
  std::string received;
  boost::system::error_code ec;
  net::read_until(socket, net::dynamic_buffer(received), until, ec);
  EXPECT_FALSE(ec) << target << " " << body << ": " << ec.message() << "; received:\n" << received;
}

double Count(const testing::MetricsText& m, const std::string& status) {
  return m.Value("smallmind_requests_total", {{"status", status}}).value_or(0);
}

TEST(HttpCancelTest, ClientLeavingMidStreamCancelsItsWorkerRequestAndFreesItsKvBlocks) {
  constexpr int kMaxNew = 8000;
  const testing::ScopedTempDir models;  // outlives the gateway that maps the file
  testing::GatewayOptions options;
  options.model = testing::LongContextTinyModel(models);
  ASSERT_FALSE(options.model.empty()) << "smallmind-modelgen failed";
  options.http = true;
  auto started = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  testing::GatewayFixture& gateway = **started;
  auto before = gateway.WorkerStats(0);
  ASSERT_TRUE(before.ok()) << before.status().ToString();

  {
    net::io_context io;
    net::ip::tcp::resolver resolver(io);
    net::ip::tcp::socket socket(io);
    auto [host, port] = testing::HostPort(gateway.http_address());
    net::connect(socket, resolver.resolve(host, port));
    const std::string body = R"({"prompt":"cancel me","max_tokens":)" + std::to_string(kMaxNew) +
                             R"(,"ignore_eos":true,"stream":true,"seed":1})";
    net::write(socket, net::buffer("POST /v1/completions HTTP/1.1\r\nHost: t\r\nContent-Length: " +
                                   std::to_string(body.size()) + "\r\n\r\n" + body));
    // The header and the first token event arrived: the request runs on the worker.
    std::string received;
    net::read_until(socket, net::dynamic_buffer(received), "\"text\"");
    EXPECT_NE(received.find("text/event-stream"), std::string::npos) << received;
  }  // the client leaves

  const shared::Result<v1::WorkerStats> after = gateway.WaitForIdleWorker(0);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(shared::ReadWorkerStat(after->values(), shared::WorkerStat::kRunning) +
                shared::ReadWorkerStat(after->values(), shared::WorkerStat::kWaiting),
            0u)
      << "the request is still scheduled";
  EXPECT_EQ(shared::ReadWorkerStat(after->values(), shared::WorkerStat::kKvPagesUsed), 0u)
      << "its KV blocks were not freed";
  EXPECT_LT(shared::ReadWorkerStat(after->values(), shared::WorkerStat::kGenerationTokens) -
                shared::ReadWorkerStat(before->values(), shared::WorkerStat::kGenerationTokens),
            static_cast<uint64_t>(kMaxNew))
      << "it ran to the end instead of being cancelled";
  // The door still serves.
  const testing::HttpReply next = testing::HttpCall(
      gateway.http_address(), "POST", "/v1/completions", R"({"prompt":"after","max_tokens":4})");
  EXPECT_EQ(next.status, 200) << next.body;

  // A request past its deadline (our `timeout` field) is a 504 in OpenAI's error shape.
  const testing::HttpReply late =
      testing::HttpCall(gateway.http_address(), "POST", "/v1/completions",
                        R"({"prompt":"late","max_tokens":8000,"ignore_eos":true,"timeout":0.2})");
  EXPECT_EQ(late.status, 504) << late.body;
  EXPECT_EQ(late.json()["error"]["type"], "timeout_error") << late.body;
}

// Issue 45: a client that leaves a /v1/embeddings request while the worker runs it cancels the
// worker call, whose reactor cancels every input's sequence: the worker is idle with its KV free
// before it could have embedded them all, and the door serves the next request.
TEST(HttpCancelTest, ClientLeavingAnEmbeddingsRequestCancelsItsSequences) {
  constexpr int kInputs = 256;
  constexpr int kTokens = 480;  // stories260K's context is 512
  testing::GatewayOptions options;
  options.model = "builtin:stories260K";
  options.http = true;
  auto started = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  testing::GatewayFixture& gateway = **started;
  auto before = gateway.WorkerStats(0);
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  std::string input = "[";
  for (int i = 0; i < kInputs; ++i) {
    input += i ? ",[" : "[";
    for (int t = 0; t < kTokens; ++t) {
      input += (t ? "," : "") + std::to_string(1 + (i * 7 + t) % 500);
    }
    input += "]";
  }
  const std::string body = R"({"input":)" + input + R"(],"pooling":"last"})";
  using shared::WorkerStat;
  const auto stat = [](const v1::WorkerStats& s, WorkerStat which) {
    return shared::ReadWorkerStat(s.values(), which);
  };
  bool running = false;
  {
    net::io_context io;
    net::ip::tcp::resolver resolver(io);
    net::ip::tcp::socket socket(io);
    auto [host, port] = testing::HostPort(gateway.http_address());
    net::connect(socket, resolver.resolve(host, port));
    net::write(socket, net::buffer("POST /v1/embeddings HTTP/1.1\r\nHost: t\r\nContent-Length: " +
                                   std::to_string(body.size()) + "\r\n\r\n" + body));
    // Bounded: 2000 polls 5 ms apart, until the worker runs the inputs.
    for (int polls = 0; polls < 2000 && !running; ++polls) {
      auto now = gateway.WorkerStats(0);
      running = now.ok() && stat(*now, WorkerStat::kRunning) + stat(*now, WorkerStat::kWaiting) > 0;
      if (!running) std::this_thread::sleep_for(milliseconds(5));
    }
  }  // the client leaves
  ASSERT_TRUE(running) << "the worker never ran the embeddings";
  const shared::Result<v1::WorkerStats> after = gateway.WaitForIdleWorker(0);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(stat(*after, WorkerStat::kRunning) + stat(*after, WorkerStat::kWaiting), 0u);
  EXPECT_EQ(stat(*after, WorkerStat::kKvPagesUsed), 0u) << "its KV blocks were not freed";
  EXPECT_LT(stat(*after, WorkerStat::kPrefillTokens) - stat(*before, WorkerStat::kPrefillTokens),
            static_cast<uint64_t>(kInputs) * kTokens)
      << "every input was embedded instead of cancelled";
  const testing::HttpReply next = testing::HttpCall(
      gateway.http_address(), "POST", "/v1/embeddings", R"({"input":["after"],"pooling":"last"})");
  EXPECT_EQ(next.status, 200) << next.body;
}

// Issue 40: every client that leaves is counted as CANCELLED, never as OK (about half were): the
// streamed ones after their first event and the whole ones while the worker still generates, on
// the OpenAI and the Anthropic routes.
TEST(HttpCancelTest, EveryClientThatLeavesCountsAsCancelledInTheMetrics) {
  const testing::ScopedTempDir models;  // outlives the gateway that maps the file
  testing::GatewayOptions options;
  options.model = testing::LongContextTinyModel(models);
  ASSERT_FALSE(options.model.empty()) << "smallmind-modelgen failed";
  options.http = true;
  options.metrics = true;
  auto started = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  testing::GatewayFixture& gateway = **started;
  const int metrics_port = gateway.metrics_port();

  constexpr int kStreamed = 16;
  for (int i = 0; i < kStreamed; ++i) {
    const std::string seed = std::to_string(700 + i);
    if (i % 2 == 0) {
      PostAndLeave(gateway.http_address(), "/v1/completions",
                   R"({"prompt":"leave","max_tokens":4000,"ignore_eos":true,"stream":true,)"
                   R"("seed":)" +
                       seed + "}",
                   "\"text\"");
    } else {
      PostAndLeave(gateway.http_address(), "/v1/messages",
                   R"({"max_tokens":4000,"ignore_eos":true,"stream":true,"seed":)" + seed +
                       R"(,"messages":[{"role":"user","content":"leave"}]})",
                   "content_block_delta");
    }
  }
  // A whole (unstreamed) completion: the client leaves once the worker has produced tokens.
  constexpr int kWhole = 4;
  for (int i = 0; i < kWhole; ++i) {
    net::io_context io;
    net::ip::tcp::resolver resolver(io);
    net::ip::tcp::socket socket(io);
    auto [host, port] = testing::HostPort(gateway.http_address());
    net::connect(socket, resolver.resolve(host, port));
    const std::string body = R"({"prompt":"leave whole","max_tokens":4000,"ignore_eos":true,)"
                             R"("seed":)" +
                             std::to_string(800 + i) + "}";
    net::write(socket, net::buffer("POST /v1/completions HTTP/1.1\r\nHost: t\r\nContent-Length: " +
                                   std::to_string(body.size()) + "\r\n\r\n" + body));
    // Leave once the worker is generating it (bounded: 10 s).
    for (int wait = 0; wait < 200; ++wait) {
      auto stats = gateway.WorkerStats(0);
      if (stats.ok() && shared::ReadWorkerStat(stats->values(), shared::WorkerStat::kRunning) > 0)
        break;
      std::this_thread::sleep_for(milliseconds(50));
    }
  }
  constexpr int kLeft = kStreamed + kWhole;
  testing::MetricsText m;
  for (int attempt = 0; attempt < 200; ++attempt) {  // counted once each worker call ended
    auto response = testing::HttpGet("127.0.0.1", metrics_port, "/metrics");
    ASSERT_TRUE(response.ok()) << response.status().ToString();
    auto parsed = testing::ParseMetricsText(response->body);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    m = *parsed;
    if (Count(m, "CANCELLED") + Count(m, "OK") >= kLeft) break;
    std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_EQ(Count(m, "CANCELLED"), kLeft);
  EXPECT_EQ(Count(m, "OK"), 0);
}

}  // namespace
}  // namespace smallmind
