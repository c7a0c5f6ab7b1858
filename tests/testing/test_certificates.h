// Test certificates made at test time with the openssl CLI (never committed): a CA, a server
// certificate for localhost / 127.0.0.1 / ::1 and a client certificate signed by it, and a second
// CA with its own client certificate that the first CA's holders must refuse. Written into a
// directory the test owns (a ScopedTempDir). Thread-compatible.
#pragma once

#include <string>

#include "shared/status.h"

namespace smallmind::testing {

struct TestCertificates {
  std::string dir;
  std::string ca_cert;  // PEM CA certificate that signed server_* and client_*
  std::string server_cert, server_key;
  std::string client_cert, client_key;
  std::string other_ca_cert;  // an unrelated CA, and a client certificate it signed
  std::string other_client_cert, other_client_key;
};

// Runs openssl (found on PATH) to write the files into `dir`; NOT_FOUND when openssl is missing.
shared::Result<TestCertificates> MakeTestCertificates(const std::string& dir);

// The whole text of a file ("" when it cannot be read).
std::string ReadTextFile(const std::string& path);

}  // namespace smallmind::testing
