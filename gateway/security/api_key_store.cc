#include "gateway/security/api_key_store.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

namespace smallmind::gateway {
namespace {

using shared::Status;

// A key file is a handful of lines; anything larger is a wrong path (a model, /dev/zero).
constexpr std::streamsize kMaxKeyFileBytes = 1 << 20;

constexpr std::string_view kWhitespace = " \t\r";

std::string_view Trim(std::string_view s) {
  const size_t begin = s.find_first_not_of(kWhitespace);
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(kWhitespace) - begin + 1);
}

bool IsKeyChar(char c) { return c > ' ' && c < 0x7f; }

shared::Result<std::string> ReadKeyFile(const std::string& origin, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return shared::NotFound(fmt::format("{}: {}", origin, std::strerror(errno)));
  std::string text(static_cast<size_t>(kMaxKeyFileBytes) + 1, '\0');
  in.read(text.data(), kMaxKeyFileBytes + 1);
  text.resize(static_cast<size_t>(in.gcount()));
  if (in.bad()) return shared::Internal(fmt::format("error reading the API key file {}", path));
  if (text.size() > static_cast<size_t>(kMaxKeyFileBytes)) {
    return shared::InvalidArgument(
        fmt::format("the API key file {} is larger than {} bytes; is it the right file?", path,
                    kMaxKeyFileBytes));
  }
  return text;
}

// The keys grant access to the service: say so when others on the machine can read them.
void WarnIfReadableByOthers(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    spdlog::warn("the API key file {} is readable by other users (mode {:o}); chmod 600 it", path,
                 st.st_mode & 0777);
  }
}

}  // namespace

shared::Result<std::vector<std::string>> ParseApiKeys(std::string_view text,
                                                      std::string_view origin) {
  std::vector<std::string> keys;
  int line_number = 0;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    const std::string_view raw = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    ++line_number;
    const std::string_view line = Trim(raw);
    if (line.empty() || line.front() == '#') continue;
    const size_t end = line.find_first_of(kWhitespace);
    const std::string_view key = line.substr(0, end);
    if (end != std::string_view::npos && Trim(line.substr(end)).front() != '#') {
      return shared::InvalidArgument(
          fmt::format("{} line {}: a key must not contain spaces (a comment after a key starts "
                      "with '#')",
                      origin, line_number));
    }
    if (!std::all_of(key.begin(), key.end(), IsKeyChar)) {
      return shared::InvalidArgument(
          fmt::format("{} line {}: a key must be printable ASCII", origin, line_number));
    }
    keys.emplace_back(key);
  }
  if (keys.empty()) {
    return shared::InvalidArgument(
        fmt::format("{} has no key (one per line; '#' starts a comment)", origin));
  }
  return keys;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  // volatile: the compiler may not turn the loop into an early-exit comparison.
  volatile unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const auto x = static_cast<unsigned char>(i < a.size() ? a[i] : 0);
    const auto y = static_cast<unsigned char>(i < b.size() ? b[i] : 0);
    diff = diff | static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

ApiKeyStore::ApiKeyStore(std::vector<std::string> fixed_keys, std::string file)
    : fixed_keys_(std::move(fixed_keys)),
      file_(std::move(file)),
      enabled_(!fixed_keys_.empty() || !file_.empty()),
      file_keys_(std::make_shared<const std::vector<std::string>>()) {}

Status ApiKeyStore::Load() {
  if (file_.empty()) return Status::Ok();
  const std::string origin = "--api-keys-file " + file_;
  SM_ASSIGN_OR_RETURN(const std::string text, ReadKeyFile(origin, file_));
  SM_ASSIGN_OR_RETURN(std::vector<std::string> keys, ParseApiKeys(text, origin));
  WarnIfReadableByOthers(file_);
  auto fresh = std::make_shared<const std::vector<std::string>>(std::move(keys));
  std::lock_guard<std::mutex> lock(mu_);
  file_keys_ = std::move(fresh);
  return Status::Ok();
}

size_t ApiKeyStore::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fixed_keys_.size() + file_keys_->size();
}

bool ApiKeyStore::Accepts(std::string_view key) const {
  std::shared_ptr<const std::vector<std::string>> file_keys;
  {
    std::lock_guard<std::mutex> lock(mu_);
    file_keys = file_keys_;
  }
  // Every key is compared, whichever matches, so the time does not tell which one did.
  bool match = false;
  for (const auto& k : fixed_keys_) match |= ConstantTimeEquals(key, k);
  for (const auto& k : *file_keys) match |= ConstantTimeEquals(key, k);
  return match;
}

Status ApiKeyStore::Authenticate(std::optional<std::string_view> authorization) const {
  if (!enabled_) return Status::Ok();
  if (!authorization.has_value()) {
    return {shared::StatusCode::kUnauthenticated,
            "this gateway requires an API key: send `authorization: Bearer <key>`"};
  }
  const std::string_view value = Trim(*authorization);
  constexpr std::string_view kScheme = "bearer ";
  const bool bearer = value.size() > kScheme.size() &&
                      std::equal(kScheme.begin(), kScheme.end(), value.begin(), [](char s, char v) {
                        return s == (v >= 'A' && v <= 'Z' ? v - 'A' + 'a' : v);
                      });
  if (!bearer) {
    return {shared::StatusCode::kUnauthenticated, "the authorization value must be `Bearer <key>`"};
  }
  if (!Accepts(Trim(value.substr(kScheme.size())))) {
    return {shared::StatusCode::kUnauthenticated,
            "the API key in `authorization: Bearer <key>` is not one this gateway accepts"};
  }
  return Status::Ok();
}

}  // namespace smallmind::gateway
