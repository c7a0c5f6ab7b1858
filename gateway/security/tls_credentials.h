// TlsCredentials: the public port's TLS material (--tls-cert, --tls-key and, for mutual TLS,
// --tls-client-ca), read and checked once at startup so that a wrong file is an error naming it
// before any worker starts. Built by Gateway; the gRPC server and the HTTP door take their
// credentials from the same object. Immutable after Load; thread-safe.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/security/server_credentials.h>

#include "gateway/security/tls_options.h"
#include "shared/status.h"

namespace smallmind::gateway {

class TlsCredentials {
 public:
  // Reads the PEM files of `options` (cert and key required) and checks that the certificate
  // parses, has not expired and matches the key, and that the client CA (when given) holds a
  // certificate. Errors name the flag and the file.
  static shared::Result<TlsCredentials> Load(const TlsOptions& options);

  const std::string& cert_chain_pem() const { return cert_chain_pem_; }
  const std::string& private_key_pem() const { return private_key_pem_; }
  // "" = client certificates are not asked for.
  const std::string& client_ca_pem() const { return client_ca_pem_; }
  bool requires_client_cert() const { return !client_ca_pem_.empty(); }
  // The certificate's subject, for the startup log line.
  const std::string& subject() const { return subject_; }

  // TLS 1.2+ server credentials; with a client CA, every client must present a certificate it
  // signed (the handshake fails otherwise).
  std::shared_ptr<grpc::ServerCredentials> ServerCredentials() const;

 private:
  TlsCredentials() = default;

  std::string cert_chain_pem_;
  std::string private_key_pem_;
  std::string client_ca_pem_;
  std::string subject_;
};

}  // namespace smallmind::gateway
