#include "gateway/security/tls_credentials.h"

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/testing/scoped_temp_dir.h"
#include "tests/testing/test_certificates.h"

namespace smallmind::gateway {
namespace {

// One set of certificates for the whole binary (openssl takes about a second to make them); the
// directory goes at exit.
struct SuiteCertificates {
  testing::ScopedTempDir dir{"tls"};
  shared::Result<testing::TestCertificates> made = testing::MakeTestCertificates(dir.path());
};

const SuiteCertificates& Suite() {
  static const SuiteCertificates suite;
  return suite;
}

class TlsCredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Suite().made.ok()) GTEST_SKIP() << Suite().made.status().ToString();
    certs_ = &Suite().made.value();
  }
  std::string File(const std::string& name) const { return Suite().dir.File(name); }

  const testing::TestCertificates* certs_ = nullptr;
};

TEST_F(TlsCredentialsTest, LoadsAMatchingCertificateAndKey) {
  auto tls = TlsCredentials::Load({certs_->server_cert, certs_->server_key, ""});
  ASSERT_TRUE(tls.ok()) << tls.status().ToString();
  EXPECT_FALSE(tls->requires_client_cert());
  EXPECT_NE(tls->subject().find("smallmind-test-server"), std::string::npos) << tls->subject();
  EXPECT_EQ(tls->cert_chain_pem(), testing::ReadTextFile(certs_->server_cert));
  EXPECT_EQ(tls->private_key_pem(), testing::ReadTextFile(certs_->server_key));
  EXPECT_NE(tls->ServerCredentials(), nullptr);
}

TEST_F(TlsCredentialsTest, AClientCaTurnsOnClientCertificates) {
  auto tls = TlsCredentials::Load({certs_->server_cert, certs_->server_key, certs_->ca_cert});
  ASSERT_TRUE(tls.ok()) << tls.status().ToString();
  EXPECT_TRUE(tls->requires_client_cert());
  EXPECT_EQ(tls->client_ca_pem(), testing::ReadTextFile(certs_->ca_cert));
}

TEST_F(TlsCredentialsTest, AKeyOfAnotherCertificateIsRefusedNamingBothFiles) {
  auto tls = TlsCredentials::Load({certs_->server_cert, certs_->client_key, ""});
  ASSERT_FALSE(tls.ok());
  EXPECT_EQ(tls.status().code(), shared::StatusCode::kInvalidArgument);
  EXPECT_NE(tls.status().message().find("is not the key of the certificate"), std::string::npos)
      << tls.status().message();
  EXPECT_NE(tls.status().message().find(certs_->client_key), std::string::npos);
}

TEST_F(TlsCredentialsTest, MissingOrNonPemFilesAreErrorsNamingTheFlag) {
  auto missing = TlsCredentials::Load({File("nope.pem"), certs_->server_key, ""});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), shared::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("--tls-cert"), std::string::npos);
  const std::string junk = File("junk.pem");
  std::ofstream(junk) << "not a certificate\n";
  auto not_pem = TlsCredentials::Load({certs_->server_cert, junk, ""});
  ASSERT_FALSE(not_pem.ok());
  EXPECT_NE(not_pem.status().message().find("--tls-key " + junk + " is not a PEM file"),
            std::string::npos)
      << not_pem.status().message();
  auto key_as_ca =
      TlsCredentials::Load({certs_->server_cert, certs_->server_key, certs_->ca_cert + ".missing"});
  ASSERT_FALSE(key_as_ca.ok());
  EXPECT_NE(key_as_ca.status().message().find("--tls-client-ca"), std::string::npos);
  auto key_for_cert = TlsCredentials::Load({certs_->server_key, certs_->server_key, ""});
  ASSERT_FALSE(key_for_cert.ok());
  EXPECT_NE(key_for_cert.status().message().find("no certificate in it"), std::string::npos)
      << key_for_cert.status().message();
}

}  // namespace
}  // namespace smallmind::gateway
