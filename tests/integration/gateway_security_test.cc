// A real gateway's public port with TLS, mutual TLS and API keys: TLS clients connect, plaintext
// and untrusted clients are refused, mTLS refuses clients without a certificate from its CA, a
// wrong or missing key is UNAUTHENTICATED, and SIGHUP reloads the key file (a bad file keeps the
// old keys). The `smallmind` CLI's TLS flags are checked against the same gateways.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include "smallmind/v1/inference.grpc.pb.h"
#include "tests/testing/child_process.h"
#include "tests/testing/rpc/secure_gateway.h"
#include "tests/testing/scoped_temp_dir.h"
#include "tests/testing/test_certificates.h"

namespace smallmind {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::ReadTextFile;

using testing::SecureGateway;

std::shared_ptr<grpc::ChannelCredentials> Tls(const std::string& ca, const std::string& cert = "",
                                              const std::string& key = "") {
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = ReadTextFile(ca);
  if (!cert.empty()) {
    options.pem_cert_chain = ReadTextFile(cert);
    options.pem_private_key = ReadTextFile(key);
  }
  return grpc::SslCredentials(options);
}

// GetModelInfo over a fresh channel with `credentials` and optional `key`.
grpc::Status Info(const std::string& address, std::shared_ptr<grpc::ChannelCredentials> credentials,
                  const std::string& key = "") {
  auto stub = v1::Inference::NewStub(grpc::CreateChannel(address, credentials));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(10));
  if (!key.empty()) context.AddMetadata("authorization", "Bearer " + key);
  v1::ModelInfo info;
  return stub->GetModelInfo(&context, {}, &info);
}

// A short greedy Generate to its end.
grpc::Status Generate(const std::string& address,
                      std::shared_ptr<grpc::ChannelCredentials> credentials,
                      const std::string& key = "") {
  auto stub = v1::Inference::NewStub(grpc::CreateChannel(address, credentials));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(60));
  if (!key.empty()) context.AddMetadata("authorization", "Bearer " + key);
  v1::GenerateRequest request;
  request.set_prompt("hello");
  request.mutable_stopping()->set_max_new_tokens(4);
  auto reader = stub->Generate(&context, request);
  v1::GenerateResponse message;
  for (int i = 0; i < 64 && reader->Read(&message); ++i) {
  }
  return reader->Finish();
}

// Whether a TLS handshake with the gRPC port at "127.0.0.1:PORT" `address` succeeds for a client
// limited to `max_version` and (on TLS 1.2) `ciphers`, offering ALPN h2 as gRPC clients do.
bool TlsHandshakes(const std::string& address, const std::string& ca, int max_version,
                   const char* ciphers) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) return false;
  SSL_CTX_set_max_proto_version(ctx, max_version);
  if (ciphers != nullptr) SSL_CTX_set_cipher_list(ctx, ciphers);
  SSL_CTX_load_verify_locations(ctx, ca.c_str(), nullptr);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  static const unsigned char kAlpn[] = {2, 'h', '2'};
  SSL_CTX_set_alpn_protos(ctx, kAlpn, sizeof(kAlpn));
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(address.rfind(':') + 1))));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  SSL* ssl = ok ? SSL_new(ctx) : nullptr;
  if (ssl != nullptr) {
    SSL_set_fd(ssl, fd);
    ok = SSL_connect(ssl) == 1;
    SSL_free(ssl);
  }
  ::close(fd);
  SSL_CTX_free(ctx);
  return ok;
}

// Exit code of the `smallmind` CLI run with `args`.
int Cli(std::vector<std::string> args) {
  args.insert(args.begin(), testing::BinaryPath("smallmind"));
  auto child = testing::ChildProcess::Spawn(args);
  if (!child.ok()) return -1;
  const int status = (*child)->Wait(milliseconds(60000));
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Certificates for the whole binary (openssl takes about a second); removed at exit.
struct SuiteCertificates {
  testing::ScopedTempDir dir{"certs"};
  shared::Result<testing::TestCertificates> made = testing::MakeTestCertificates(dir.path());
};

class GatewaySecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static const SuiteCertificates suite;
    if (!suite.made.ok()) GTEST_SKIP() << suite.made.status().ToString();
    certs_ = &suite.made.value();
  }
  const testing::TestCertificates* certs_ = nullptr;
};

TEST_F(GatewaySecurityTest, TlsClientsConnectAndPlaintextOrUntrustingClientsAreRefused) {
  auto gateway =
      SecureGateway::Start({"--tls-cert", certs_->server_cert, "--tls-key", certs_->server_key});
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  const std::string& address = (*gateway)->address();
  EXPECT_TRUE(Info(address, Tls(certs_->ca_cert)).ok());
  const grpc::Status generated = Generate(address, Tls(certs_->ca_cert));
  EXPECT_TRUE(generated.ok()) << generated.error_message();
  EXPECT_EQ(Info(address, grpc::InsecureChannelCredentials()).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(Info(address, Tls(certs_->other_ca_cert)).error_code(), grpc::StatusCode::UNAVAILABLE)
      << "a client that does not trust the server's CA must not talk to it";
  EXPECT_EQ(Cli({"info", "--addr", address, "--tls-ca", certs_->ca_cert}), 0);
  EXPECT_EQ(Cli({"info", "--addr", address}), 1) << "plaintext CLI on a TLS port";
  EXPECT_EQ(Cli({"info", "--addr", address, "--tls-ca", certs_->dir + "/missing.pem"}), 1);
}

TEST_F(GatewaySecurityTest, MutualTlsRefusesClientsWithoutACertificateFromItsCa) {
  auto gateway = SecureGateway::Start({"--tls-cert", certs_->server_cert, "--tls-key",
                                       certs_->server_key, "--tls-client-ca", certs_->ca_cert});
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  const std::string& address = (*gateway)->address();
  EXPECT_NE(Info(address, Tls(certs_->ca_cert)).error_code(), grpc::StatusCode::OK)
      << "no client certificate";
  EXPECT_NE(Info(address, Tls(certs_->ca_cert, certs_->other_client_cert, certs_->other_client_key))
                .error_code(),
            grpc::StatusCode::OK)
      << "a client certificate from another CA";
  const grpc::Status ok =
      Info(address, Tls(certs_->ca_cert, certs_->client_cert, certs_->client_key));
  EXPECT_TRUE(ok.ok()) << ok.error_message();
  EXPECT_EQ(Cli({"info", "--addr", address, "--tls-ca", certs_->ca_cert, "--tls-cert",
                 certs_->client_cert, "--tls-key", certs_->client_key}),
            0);
  EXPECT_EQ(Cli({"info", "--addr", address, "--tls-ca", certs_->ca_cert}), 1);
}

void WriteKeys(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
  ::chmod(path.c_str(), 0600);
}

TEST_F(GatewaySecurityTest, WrongOrMissingKeysAreUnauthenticatedAndSighupReloadsTheKeyFile) {
  const testing::ScopedTempDir dir("keys");
  const std::string keys = dir.File("api-keys");
  WriteKeys(keys, "# test keys\nfirst-key  # the first\n");
  auto started = SecureGateway::Start({"--api-keys-file", keys});
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  SecureGateway& gateway = **started;
  const auto plain = grpc::InsecureChannelCredentials();
  EXPECT_EQ(Info(gateway.address(), plain).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Generate(gateway.address(), plain).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Generate(gateway.address(), plain, "wrong-key").error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(Generate(gateway.address(), plain, "first-key").ok());
  EXPECT_EQ(Cli({"health", "--addr", gateway.address()}), 0) << "health probes need no key";
  EXPECT_EQ(Cli({"info", "--addr", gateway.address()}), 1);
  EXPECT_EQ(Cli({"info", "--addr", gateway.address(), "--api-key", "first-key"}), 0);

  WriteKeys(keys, "second-key\n");
  gateway.process().Signal(SIGHUP);
  ASSERT_TRUE(gateway.process().WaitForLine("reloaded API keys", milliseconds(60000)).ok());
  EXPECT_TRUE(Info(gateway.address(), plain, "second-key").ok());
  EXPECT_EQ(Info(gateway.address(), plain, "first-key").error_code(),
            grpc::StatusCode::UNAUTHENTICATED)
      << "a key removed from the file stops working at the reload";

  WriteKeys(keys, "a key with spaces\n");
  gateway.process().Signal(SIGHUP);
  ASSERT_TRUE(gateway.process().WaitForLine("kept the API keys", milliseconds(60000)).ok());
  EXPECT_TRUE(Info(gateway.address(), plain, "second-key").ok()) << "a bad file keeps the keys";
}

TEST_F(GatewaySecurityTest, WorkerSocketsLiveInADirectoryOnlyTheGatewaysUserCanEnter) {
  auto gateway = SecureGateway::Start({});
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  std::vector<std::filesystem::path> dirs;
  for (const auto& e : std::filesystem::directory_iterator((*gateway)->runtime_dir())) {
    dirs.push_back(e.path());
  }
  ASSERT_EQ(dirs.size(), 1u);
  struct stat st {};
  ASSERT_EQ(::stat(dirs[0].c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u) << dirs[0];
  EXPECT_TRUE(std::filesystem::is_socket(dirs[0] / "worker-0.sock"));
}

TEST_F(GatewaySecurityTest, ABadTlsOrKeyFileStopsTheStartBeforeAnyWorker) {
  const testing::ScopedTempDir runtime("bad");
  for (std::vector<std::string> flags :
       {std::vector<std::string>{"--tls-cert", certs_->server_cert, "--tls-key",
                                 certs_->client_key},
        std::vector<std::string>{"--api-keys-file", certs_->dir + "/missing-keys"}}) {
    std::vector<std::string> argv = {testing::BinaryPath("smallmind-gateway"),
                                     "--port",
                                     "0",
                                     "--listen-host",
                                     "127.0.0.1",
                                     "--runtime-dir",
                                     runtime.path()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    auto child = testing::ChildProcess::Spawn(argv);
    ASSERT_TRUE(child.ok());
    const int status = (*child)->Wait(milliseconds(60000));
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << flags[0] << ": " << status;
    EXPECT_TRUE(std::filesystem::is_empty(runtime.path())) << flags[0] << " spawned workers";
  }
}

// The gRPC TLS port's cipher policy, as the HTTPS door's test checks its own (issue 40): TLS 1.2
// only with ECDHE and an AEAD cipher, and TLS 1.3; an old CBC suite is refused.
TEST_F(GatewaySecurityTest, TheGrpcTlsPortRefusesCbcSuitesAndTakesEcdheAeadAndTls13) {
  auto gateway =
      SecureGateway::Start({"--tls-cert", certs_->server_cert, "--tls-key", certs_->server_key});
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  const std::string& address = (*gateway)->address();
  const std::string& ca = certs_->ca_cert;
  EXPECT_FALSE(TlsHandshakes(address, ca, TLS1_2_VERSION, "AES128-SHA"));
  EXPECT_FALSE(TlsHandshakes(address, ca, TLS1_2_VERSION, "ECDHE-ECDSA-AES128-SHA"));
  EXPECT_FALSE(TlsHandshakes(address, ca, TLS1_2_VERSION, "ECDHE-RSA-AES128-SHA"));
  // Some AEAD suite with ECDHE of the certificate's kind is taken.
  EXPECT_TRUE(TlsHandshakes(address, ca, TLS1_2_VERSION,
                            "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256"));
  EXPECT_TRUE(TlsHandshakes(address, ca, TLS1_3_VERSION, nullptr));
  EXPECT_TRUE(Info(address, Tls(ca)).ok()) << "the port still serves after the refusals";
}

}  // namespace
}  // namespace smallmind
