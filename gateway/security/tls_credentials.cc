#include "gateway/security/tls_credentials.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <grpcpp/security/server_credentials.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

namespace smallmind::gateway {
namespace {

using shared::InvalidArgument;
using shared::Status;

// PEM files are a few KiB; a bound keeps a wrong path (a model file) from being read whole.
constexpr std::streamsize kMaxPemBytes = 1 << 20;

template <typename T, void (*Free)(T*)>
struct OpenSslDeleter {
  void operator()(T* p) const { Free(p); }
};
using Bio = std::unique_ptr<BIO, OpenSslDeleter<BIO, BIO_free_all>>;
using X509Ptr = std::unique_ptr<X509, OpenSslDeleter<X509, X509_free>>;
using KeyPtr = std::unique_ptr<EVP_PKEY, OpenSslDeleter<EVP_PKEY, EVP_PKEY_free>>;

// The last OpenSSL error as text, and the queue emptied.
std::string OpenSslError() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "no PEM data";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof(buf));
  return buf;
}

shared::Result<std::string> ReadPem(const std::string& flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return shared::NotFound(fmt::format("{} {}: {}", flag, path, std::strerror(errno)));
  }
  std::string text(static_cast<size_t>(kMaxPemBytes) + 1, '\0');
  in.read(text.data(), kMaxPemBytes + 1);
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > static_cast<size_t>(kMaxPemBytes) || text.find("-----BEGIN ") == text.npos) {
    return InvalidArgument(fmt::format("{} {} is not a PEM file", flag, path));
  }
  return text;
}

Bio MemoryBio(const std::string& pem) {
  return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

std::string SubjectOf(X509* cert) {
  char buf[512];
  X509_NAME_oneline(X509_get_subject_name(cert), buf, sizeof(buf));
  return buf;
}

// The first certificate of the chain must parse, be valid now and belong to the key.
Status CheckCertAndKey(const TlsOptions& o, const std::string& cert_pem, const std::string& key_pem,
                       std::string* subject) {
  X509Ptr cert(PEM_read_bio_X509(MemoryBio(cert_pem).get(), nullptr, nullptr, nullptr));
  if (!cert) {
    return InvalidArgument(
        fmt::format("--tls-cert {}: no certificate in it ({})", o.cert_file, OpenSslError()));
  }
  KeyPtr key(PEM_read_bio_PrivateKey(MemoryBio(key_pem).get(), nullptr, nullptr, nullptr));
  if (!key) {
    return InvalidArgument(fmt::format("--tls-key {}: no unencrypted private key in it ({})",
                                       o.key_file, OpenSslError()));
  }
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return InvalidArgument(fmt::format("--tls-key {} is not the key of the certificate in {}",
                                       o.key_file, o.cert_file));
  }
  if (X509_cmp_current_time(X509_get0_notAfter(cert.get())) <= 0) {
    return InvalidArgument(fmt::format("--tls-cert {}: the certificate has expired", o.cert_file));
  }
  if (X509_cmp_current_time(X509_get0_notBefore(cert.get())) > 0) {
    spdlog::warn("--tls-cert {}: the certificate is not valid yet (clock skew?)", o.cert_file);
  }
  *subject = SubjectOf(cert.get());
  return Status::Ok();
}

Status CheckClientCa(const TlsOptions& o, const std::string& pem) {
  X509Ptr cert(PEM_read_bio_X509(MemoryBio(pem).get(), nullptr, nullptr, nullptr));
  if (!cert) {
    return InvalidArgument(fmt::format("--tls-client-ca {}: no certificate in it ({})",
                                       o.client_ca_file, OpenSslError()));
  }
  return Status::Ok();
}

void WarnIfReadableByOthers(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    spdlog::warn("--tls-key {} is readable by other users (mode {:o}); chmod 600 it", path,
                 st.st_mode & 0777);
  }
}

}  // namespace

shared::Result<TlsCredentials> TlsCredentials::Load(const TlsOptions& options) {
  if (options.cert_file.empty() || options.key_file.empty()) {
    return InvalidArgument("TLS needs both --tls-cert and --tls-key");
  }
  TlsCredentials tls;
  SM_ASSIGN_OR_RETURN(tls.cert_chain_pem_, ReadPem("--tls-cert", options.cert_file));
  SM_ASSIGN_OR_RETURN(tls.private_key_pem_, ReadPem("--tls-key", options.key_file));
  SM_RETURN_IF_ERROR(
      CheckCertAndKey(options, tls.cert_chain_pem_, tls.private_key_pem_, &tls.subject_));
  WarnIfReadableByOthers(options.key_file);
  if (!options.client_ca_file.empty()) {
    SM_ASSIGN_OR_RETURN(tls.client_ca_pem_, ReadPem("--tls-client-ca", options.client_ca_file));
    SM_RETURN_IF_ERROR(CheckClientCa(options, tls.client_ca_pem_));
  }
  return tls;
}

std::shared_ptr<grpc::ServerCredentials> TlsCredentials::ServerCredentials() const {
  grpc::SslServerCredentialsOptions options(
      requires_client_cert() ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                             : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  options.pem_root_certs = client_ca_pem_;
  options.pem_key_cert_pairs.push_back({private_key_pem_, cert_chain_pem_});
  return grpc::SslServerCredentials(options);
}

}  // namespace smallmind::gateway
