// TlsOptions: the public ports' TLS files (part of GatewayConfig; --tls-cert, --tls-key,
// --tls-client-ca). Plain data; thread-compatible.
#pragma once

#include <string>

namespace smallmind::gateway {

// TLS on the public port (see gateway/security/tls_credentials.h); off while cert_file is empty.
struct TlsOptions {
  std::string cert_file;       // PEM certificate chain, server certificate first
  std::string key_file;        // PEM private key of that certificate, unencrypted
  std::string client_ca_file;  // non-empty: mutual TLS, client certificates signed by this CA
  bool enabled() const { return !cert_file.empty(); }
};

}  // namespace smallmind::gateway
