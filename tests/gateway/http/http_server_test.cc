// HttpServer + HttpSession over real loopback sockets, with a scripted handler.
#include "gateway/http/http_server.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace smallmind::gateway::http {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;

// /echo answers with the body; /stream sends three events; /hang answers only when the client
// is gone (reporting that through `gone`).
class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HttpServerOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    options.limits.max_body_bytes = 1024;
    options.limits.max_header_bytes = 2048;
    ASSERT_TRUE(server_
                    .Start(options,
                           [this](Request r, std::shared_ptr<Exchange> e) {
                             Handle(std::move(r), std::move(e));
                           })
                    .ok());
  }
  void TearDown() override { server_.Shutdown(std::chrono::system_clock::now()); }

  void Handle(Request r, std::shared_ptr<Exchange> e) {
    if (r.target() == "/stream") {
      e->Send("data: 1\n\n", [e](bool ok) {
        if (!ok) return;
        e->Send("data: 2\n\n", [e](bool ok) {
          if (ok) e->Send("data: [DONE]\n\n", nullptr);
          e->EndStream(false);
        });
      });
      return;
    }
    if (r.target() == "/stoppable") {  // ends its stream with a last event when told
      e->OnServerStop([e] {
        e->Send("data: bye\n\n", nullptr);
        e->EndStream(/*close=*/true);
      });
      e->Send("data: 1\n\n", [this](bool) { streaming_.set_value(); });
      return;
    }
    if (r.target() == "/hang") {
      e->OnClientGone([this, e] {
        gone_.set_value();
        e->Reply(JsonResponse(200, "ignored"));
      });
      return;
    }
    e->Reply(JsonResponse(200, r.body()));
  }

  tcp::socket Connect() {
    tcp::socket s(io_);
    s.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"),
                            static_cast<unsigned short>(server_.port())));
    return s;
  }

  beast::http::response<beast::http::string_body> Read(tcp::socket& s) {
    beast::http::response<beast::http::string_body> r;
    beast::http::read(s, buffer_, r);
    return r;
  }

  net::io_context io_;
  beast::flat_buffer buffer_;
  HttpServer server_;
  std::promise<void> gone_;
  std::promise<void> streaming_;
};

TEST_F(ServerTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  tcp::socket s = Connect();
  for (int i = 0; i < 3; ++i) {
    const std::string body = "hello " + std::to_string(i);
    net::write(s, net::buffer("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\n\r\n" + body));
    auto r = Read(s);
    EXPECT_EQ(r.result_int(), 200);
    EXPECT_EQ(r.body(), body);
    EXPECT_TRUE(r.keep_alive());
  }
}

TEST_F(ServerTest, EventStreamIsChunkedAndTheConnectionStaysUsable) {
  tcp::socket s = Connect();
  net::write(s, net::buffer(std::string("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")));
  auto r = Read(s);
  EXPECT_EQ(r.result_int(), 200);
  EXPECT_EQ(r[beast::http::field::content_type], "text/event-stream");
  EXPECT_TRUE(r.chunked());
  EXPECT_EQ(r.body(), "data: 1\n\ndata: 2\n\ndata: [DONE]\n\n");
  net::write(
      s, net::buffer(std::string("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok")));
  EXPECT_EQ(Read(s).body(), "ok");
}

TEST_F(ServerTest, OversizedBodyGets413AndOversizedHeaderGets431) {
  tcp::socket s = Connect();
  // Declared larger than the limit: refused from the header, before any body byte is read.
  net::write(s, net::buffer(
                    std::string("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n")));
  auto r = Read(s);
  EXPECT_EQ(r.result_int(), 413);
  EXPECT_NE(r.body().find("larger than 1024 bytes"), std::string::npos) << r.body();
  EXPECT_FALSE(r.keep_alive());

  tcp::socket h = Connect();
  net::write(h, net::buffer("GET /echo HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(4096, 'a') +
                            "\r\n\r\n"));
  EXPECT_EQ(Read(h).result_int(), 431);
}

TEST_F(ServerTest, MalformedRequestGets400) {
  tcp::socket s = Connect();
  net::write(s, net::buffer(std::string("NOT HTTP AT ALL\r\n\r\n")));
  auto r = Read(s);
  EXPECT_EQ(r.result_int(), 400);
  EXPECT_NE(r.body().find("\"error\""), std::string::npos);
}

TEST_F(ServerTest, ClientThatLeavesMidRequestIsReportedToTheHandler) {
  std::future<void> gone = gone_.get_future();
  {
    tcp::socket s = Connect();
    net::write(s, net::buffer(std::string("GET /hang HTTP/1.1\r\nHost: x\r\n\r\n")));
  }  // closed
  EXPECT_EQ(gone.wait_for(std::chrono::seconds(30)), std::future_status::ready);
}

TEST_F(ServerTest, ShutdownClosesIdleConnectionsAndRefusesNewOnes) {
  tcp::socket s = Connect();
  server_.Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  char c;
  boost::system::error_code ec;
  net::read(s, net::buffer(&c, 1), ec);
  EXPECT_TRUE(ec == net::error::eof || ec == net::error::connection_reset) << ec.message();
  tcp::socket t(io_);
  t.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"),
                          static_cast<unsigned short>(server_.port())),
            ec);
  EXPECT_TRUE(ec) << "connected after shutdown";
}

// A drain past its deadline tells the handlers that asked; their streams end with their own last
// event before the connection closes (a handler that did not ask is just closed, as /hang is).
TEST_F(ServerTest, ShutdownLetsAStreamThatAskedEndWithItsLastEvent) {
  std::future<void> streaming = streaming_.get_future();
  tcp::socket s = Connect();
  net::write(s, net::buffer(std::string("GET /stoppable HTTP/1.1\r\nHost: x\r\n\r\n")));
  ASSERT_EQ(streaming.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  std::thread stop([this] { server_.Shutdown(std::chrono::system_clock::now()); });
  auto r = Read(s);  // the whole chunked response, its terminating chunk included
  stop.join();
  EXPECT_EQ(r.result_int(), 200);
  EXPECT_EQ(r.body(), "data: 1\n\ndata: bye\n\n");
}

}  // namespace
}  // namespace smallmind::gateway::http
