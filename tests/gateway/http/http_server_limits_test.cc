// HttpServer's defences over real loopback sockets: the connection cap and the TLS cipher policy.
#include <openssl/ssl.h>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "gateway/http/http_server.h"
#include "tests/testing/scoped_temp_dir.h"
#include "tests/testing/test_certificates.h"

namespace smallmind::gateway::http {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;

void Echo(Request r, std::shared_ptr<Exchange> e) { e->Reply(JsonResponse(200, r.body())); }

tcp::endpoint Local(const HttpServer& server) {
  return {net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(server.port())};
}

beast::http::response<beast::http::string_body> Get(tcp::socket& s, beast::flat_buffer& buffer) {
  beast::http::request<beast::http::string_body> req{beast::http::verb::get, "/x", 11};
  req.set(beast::http::field::host, "localhost");
  beast::http::write(s, req);
  beast::http::response<beast::http::string_body> r;
  beast::http::read(s, buffer, r);
  return r;
}

// 1,100 idle connections once took every descriptor of a gateway with a 1024 limit (and wedged
// its gRPC port). Now connections past --http-max-connections get a 503 and are closed, and the
// open ones go on being served.
TEST(HttpServerLimitsTest, AConnectionPastTheCapGets503AndTheOpenOnesAreServed) {
  HttpServer server;
  HttpServerOptions options;
  options.host = "127.0.0.1";
  options.max_connections = 2;
  ASSERT_TRUE(server.Start(options, Echo).ok());
  net::io_context io;
  beast::flat_buffer buffer;
  std::vector<tcp::socket> open;
  for (int i = 0; i < 2; ++i) {
    open.emplace_back(io).connect(Local(server));
    EXPECT_EQ(Get(open.back(), buffer).result_int(), 200);  // accepted and served
  }
  tcp::socket extra(io);
  extra.connect(Local(server));
  beast::http::response<beast::http::string_body> refused;
  beast::flat_buffer extra_buffer;
  beast::http::read(extra, extra_buffer, refused);
  EXPECT_EQ(refused.result_int(), 503);
  EXPECT_NE(refused.body().find("too_many_connections"), std::string::npos) << refused.body();
  EXPECT_EQ(Get(open[0], buffer).result_int(), 200);
  server.Shutdown(std::chrono::system_clock::now());
}

// The result of a TLS handshake with a client limited to `max_version` and `ciphers`.
bool Handshakes(const HttpServer& server, const std::string& ca, int max_version,
                const char* ciphers) {
  net::io_context io;
  net::ssl::context ctx(net::ssl::context::tls_client);
  ctx.add_certificate_authority(net::buffer(ca));
  ctx.set_verify_mode(net::ssl::verify_peer);
  SSL_CTX_set_max_proto_version(ctx.native_handle(), max_version);
  if (max_version == TLS1_2_VERSION) SSL_CTX_set_cipher_list(ctx.native_handle(), ciphers);
  net::ssl::stream<tcp::socket> stream(io, ctx);
  stream.next_layer().connect(Local(server));
  boost::system::error_code ec;
  stream.handshake(net::ssl::stream_base::client, ec);
  return !ec;
}

// The HTTPS door once accepted TLS 1.2 CBC suites (AES128-SHA); now, like the gRPC port, only
// ECDHE with an AEAD cipher on TLS 1.2, and TLS 1.3.
TEST(HttpServerLimitsTest, TlsRefusesCbcSuitesAndTakesEcdheAeadAndTls13) {
  testing::ScopedTempDir dir("tls-policy");
  auto certs = testing::MakeTestCertificates(dir.path());
  if (!certs.ok()) GTEST_SKIP() << certs.status().ToString();
  HttpServer server;
  HttpServerOptions options;
  options.host = "127.0.0.1";
  options.tls = {testing::ReadTextFile(certs->server_cert),
                 testing::ReadTextFile(certs->server_key), ""};
  ASSERT_TRUE(server.Start(options, Echo).ok());
  const std::string ca = testing::ReadTextFile(certs->ca_cert);
  EXPECT_FALSE(Handshakes(server, ca, TLS1_2_VERSION, "ECDHE-ECDSA-AES128-SHA"));
  EXPECT_FALSE(Handshakes(server, ca, TLS1_2_VERSION, "ECDHE-ECDSA-AES256-SHA384"));
  EXPECT_TRUE(Handshakes(server, ca, TLS1_2_VERSION, "ECDHE-ECDSA-AES128-GCM-SHA256"));
  EXPECT_TRUE(Handshakes(server, ca, TLS1_2_VERSION, "ECDHE-ECDSA-CHACHA20-POLY1305"));
  EXPECT_TRUE(Handshakes(server, ca, TLS1_3_VERSION, nullptr));
  server.Shutdown(std::chrono::system_clock::now());
}

}  // namespace
}  // namespace smallmind::gateway::http
