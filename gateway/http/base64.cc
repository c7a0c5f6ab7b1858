#include "gateway/http/base64.h"

#include <openssl/evp.h>

namespace smallmind::gateway::http {

std::string Base64Encode(std::span<const unsigned char> bytes) {
  // OpenSSL's encoder (RFC 4648 alphabet and padding, no line breaks), already linked for TLS.
  std::string out((bytes.size() + 2) / 3 * 4 + 1, '\0');  // + the NUL it writes
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes.data(),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

}  // namespace smallmind::gateway::http
