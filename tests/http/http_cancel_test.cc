// A client that disconnects mid-stream: its worker request is cancelled and its KV blocks freed
// within a step, asked of the worker itself (Stats over its socket), as the gRPC cancel test does.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>

#include "shared/worker_stat_table.h"
#include "tests/http/http_client.h"
#include "tests/testing/rpc/gateway_fixture.h"
#include "tests/testing/scoped_temp_dir.h"
#include "tests/testing/test_models.h"

namespace smallmind {
namespace {

namespace net = boost::asio;

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

}  // namespace
}  // namespace smallmind
