// Base64 (RFC 4648, standard alphabet, '=' padding) of raw bytes: OpenAI's encoding_format
// "base64" for embeddings (little-endian float32 values), by OpenSSL. Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace smallmind::gateway::http {

std::string Base64Encode(std::span<const unsigned char> bytes);

}  // namespace smallmind::gateway::http
