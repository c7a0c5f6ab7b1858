// ApiKeyStore: the API keys the gateway accepts, from --api-keys (command line or environment) and
// --api-keys-file (re-read on SIGHUP). Built by Gateway; every door (the gRPC service, the HTTP
// door) asks it about each request's `authorization` value. Thread-safe: Load swaps the file's
// keys in at once, and a file that fails to load leaves the keys in use untouched.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shared/status.h"

namespace smallmind::gateway {

// Keys from the text of a key file: one key per line; blank lines and lines starting with '#' are
// skipped; a key may be followed by whitespace and a '#' comment. Keys are printable ASCII without
// spaces (what an HTTP header or gRPC metadata value can carry). An error names `origin` and the
// line; a file without a single key is an error too (it would lock every client out).
shared::Result<std::vector<std::string>> ParseApiKeys(std::string_view text,
                                                      std::string_view origin);

// Equality whose time depends on the two lengths only, never on where the bytes first differ, so
// response times do not tell a caller how much of a guessed key was right.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

class ApiKeyStore {
 public:
  // `fixed_keys` stay for the process's life; `file` ("" = none) is read by Load().
  ApiKeyStore(std::vector<std::string> fixed_keys, std::string file);

  // Reads the file again and swaps its keys in; on error keeps the keys it had and says why,
  // naming "--api-keys-file PATH". OK (and nothing read) without a file.
  shared::Status Load();

  // Whether requests need a key: some key was configured (a file counts before it is read, so a
  // gateway never runs open by mistake).
  bool enabled() const { return enabled_; }
  const std::string& file() const { return file_; }
  // Keys accepted now (fixed plus the file's last good load).
  size_t size() const;

  // True when `key` is one of the accepted keys; compares against every key in constant time.
  bool Accepts(std::string_view key) const;
  // OK when keys are off, or `authorization` is "Bearer <key>" (scheme case-insensitive) with an
  // accepted key; UNAUTHENTICATED saying what was wrong otherwise. `authorization` is the
  // metadata / header value, nullopt when the request had none.
  shared::Status Authenticate(std::optional<std::string_view> authorization) const;

 private:
  const std::vector<std::string> fixed_keys_;
  const std::string file_;
  const bool enabled_;
  mutable std::mutex mu_;
  std::shared_ptr<const std::vector<std::string>> file_keys_;  // guarded by mu_; never null
};

}  // namespace smallmind::gateway
