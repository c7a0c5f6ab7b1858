// The HTTP door shares the gRPC port's TLS and API keys: with --tls-cert/--tls-key it serves
// HTTPS (the official openai client, trusting the test CA, lists models and streams a completion
// with the key; a wrong key gets 401), and a plaintext HTTP request to it gets no HTTP answer.
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/http/http_client.h"
#include "tests/http/node_client.h"
#include "tests/testing/rpc/secure_gateway.h"
#include "tests/testing/scoped_temp_dir.h"
#include "tests/testing/shared_data.h"
#include "tests/testing/test_certificates.h"

namespace smallmind {
namespace {

// The plaintext probe is what found a deadlock: its TLS handshake fails at once on another io
// thread, and the accept loop then dropped the session's last reference while holding the
// server's lock, which the session's destructor takes (fixed in gateway/http/http_server.cc).
TEST(HttpsDoorTest, OfficialClientSpeaksHttpsWithTheKeyAndPlaintextGetsNoAnswer) {
  const std::string node = testing::NodeMissing();
  if (!node.empty()) {
    if (testing::InCi()) FAIL() << node;
    GTEST_SKIP() << node;
  }
  const testing::ScopedTempDir dir("https");
  auto certs = testing::MakeTestCertificates(dir.path());
  ASSERT_TRUE(certs.ok()) << certs.status().ToString();
  const std::string keys = dir.path() + "/keys";
  std::ofstream(keys) << "# the test's only key\nsecret-key-1\n";

  auto gateway = testing::SecureGateway::Start({"--tls-cert", certs->server_cert, "--tls-key",
                                                certs->server_key, "--api-keys-file", keys,
                                                "--http-port", "0"});
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  const std::string https = (*gateway)->http_address();
  ASSERT_EQ(https.rfind("https://127.0.0.1:", 0), 0u) << https;

  const std::string plain = "http://" + https.substr(std::string("https://").size());
  const testing::HttpReply reply = testing::HttpCall(plain, "GET", "/health");
  EXPECT_FALSE(reply.ok && reply.status != 0)
      << "a plaintext request to the TLS port got HTTP " << reply.status << ": " << reply.body;

  EXPECT_EQ(testing::RunNode("openai_https_check.mjs",
                             {"--base-url", https + "/v1", "--api-key", "secret-key-1", "--model",
                              "builtin:tiny"},
                             {"NODE_EXTRA_CA_CERTS=" + certs->ca_cert}),
            0);
}

}  // namespace
}  // namespace smallmind
