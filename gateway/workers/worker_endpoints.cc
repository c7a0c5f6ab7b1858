#include "gateway/workers/worker_endpoints.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <charconv>
#include <memory>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

namespace smallmind::gateway {
namespace {

using shared::InvalidArgument;

// gRPC targets that name their resolver; passed through unchanged.
constexpr std::string_view kSchemes[] = {"unix:", "unix-abstract:", "ipv4:", "ipv6:", "dns:"};

bool IsIpv4(const std::string& host) {
  in_addr addr;
  return inet_pton(AF_INET, host.c_str(), &addr) == 1;
}

bool IsIpv6(const std::string& host) {
  in6_addr addr;
  return inet_pton(AF_INET6, host.c_str(), &addr) == 1;
}

// RFC 1123 host names (plus '_', which Kubernetes service names never have but SRV-style names do).
bool IsHostName(std::string_view host) {
  if (host.empty() || host.size() > 253 || host.front() == '.' || host.front() == '-') return false;
  return std::all_of(host.begin(), host.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-' || c == '_';
  });
}

shared::Result<int> ParsePort(std::string_view spec, std::string_view text) {
  int port = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || port < 1 ||
      port > 65535) {
    return InvalidArgument(fmt::format(
        "--worker-endpoints entry '{}': the port must be a number in [1, 65535]", spec));
  }
  return port;
}

}  // namespace

shared::Result<WorkerEndpoint> ParseWorkerEndpoint(std::string_view spec) {
  WorkerEndpoint endpoint;
  endpoint.spec = std::string(spec);
  for (std::string_view scheme : kSchemes) {
    if (spec.substr(0, scheme.size()) == scheme) {
      if (spec.size() == scheme.size()) {
        return InvalidArgument(
            fmt::format("--worker-endpoints entry '{}' names no address after the scheme", spec));
      }
      endpoint.target = endpoint.spec;
      return endpoint;
    }
  }
  if (!spec.empty() && spec.front() == '[') {  // [v6]:port
    const size_t close = spec.find("]:");
    if (close == std::string_view::npos || !IsIpv6(std::string(spec.substr(1, close - 1)))) {
      return InvalidArgument(
          fmt::format("--worker-endpoints entry '{}': expected [IPv6 address]:port", spec));
    }
    SM_ASSIGN_OR_RETURN(const int port, ParsePort(spec, spec.substr(close + 2)));
    endpoint.target = AddressTarget(spec.substr(1, close - 1), port);
    return endpoint;
  }
  const size_t colon = spec.rfind(':');
  if (colon == std::string_view::npos) {
    return InvalidArgument(fmt::format(
        "--worker-endpoints entry '{}' has no port: use host:port or unix:/path", spec));
  }
  const std::string host(spec.substr(0, colon));
  if (IsIpv6(host)) {
    return InvalidArgument(fmt::format(
        "--worker-endpoints entry '{}': an IPv6 address goes in brackets, [{}]:port", spec, host));
  }
  SM_ASSIGN_OR_RETURN(const int port, ParsePort(spec, spec.substr(colon + 1)));
  if (IsIpv4(host)) {
    endpoint.target = AddressTarget(host, port);
  } else if (IsHostName(host)) {
    endpoint.host = host;
    endpoint.port = port;
  } else {
    return InvalidArgument(
        fmt::format("--worker-endpoints entry '{}': '{}' is neither an IP address nor a host name",
                    spec, host));
  }
  return endpoint;
}

shared::Result<std::vector<std::string>> ResolveHostWithSystem(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_ADDRCONFIG;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owner(found, &freeaddrinfo);
  if (rc == EAI_NONAME || rc == EAI_NODATA) return std::vector<std::string>{};
  if (rc != 0) {
    return shared::Unavailable(fmt::format("cannot resolve '{}': {}", host,
                                           rc == EAI_SYSTEM ? "system error" : gai_strerror(rc)));
  }
  std::vector<std::string> addresses;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* bytes = nullptr;
    if (a->ai_family == AF_INET) {
      bytes = &reinterpret_cast<const sockaddr_in*>(a->ai_addr)->sin_addr;
    } else if (a->ai_family == AF_INET6) {
      bytes = &reinterpret_cast<const sockaddr_in6*>(a->ai_addr)->sin6_addr;
    }
    if (bytes != nullptr && inet_ntop(a->ai_family, bytes, text, sizeof(text)) != nullptr) {
      addresses.emplace_back(text);
    }
  }
  std::sort(addresses.begin(), addresses.end());
  addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
  return addresses;
}

std::string AddressTarget(std::string_view address, int port) {
  if (address.find(':') != std::string_view::npos) return fmt::format("[{}]:{}", address, port);
  return fmt::format("{}:{}", address, port);
}

WorkerEndpoints::WorkerEndpoints(const std::vector<std::string>& specs, HostResolver resolver)
    : resolver_(resolver ? std::move(resolver) : HostResolver(ResolveHostWithSystem)) {
  for (const std::string& spec : specs) {
    shared::Result<WorkerEndpoint> parsed = ParseWorkerEndpoint(spec);
    if (parsed.ok()) {
      endpoints_.push_back(std::move(parsed).value());
    } else {
      WorkerEndpoint fixed;
      fixed.spec = spec;
      fixed.target = spec;
      endpoints_.push_back(std::move(fixed));
    }
    has_names_ = has_names_ || endpoints_.back().is_name();
  }
  last_targets_.resize(endpoints_.size());
  last_error_.resize(endpoints_.size());
}

std::vector<std::string> WorkerEndpoints::Resolve() {
  std::vector<std::string> targets;
  for (size_t i = 0; i < endpoints_.size(); ++i) {
    const WorkerEndpoint& e = endpoints_[i];
    if (!e.is_name()) {
      last_targets_[i] = {e.target};
    } else if (auto addresses = resolver_(e.host); addresses.ok()) {
      if (!last_error_[i].empty()) spdlog::info("{} resolves again", e.spec);
      last_error_[i].clear();
      if (addresses->empty() && !last_targets_[i].empty()) {
        spdlog::warn("{} resolves to no address now: its workers leave", e.spec);
      }
      last_targets_[i].clear();
      for (const std::string& a : *addresses) last_targets_[i].push_back(AddressTarget(a, e.port));
    } else if (addresses.status().message() != last_error_[i]) {
      last_error_[i] = addresses.status().message();
      spdlog::warn("{}: {}; keeping its {} worker(s)", e.spec, last_error_[i],
                   last_targets_[i].size());
    }
    for (const std::string& t : last_targets_[i]) {
      if (std::find(targets.begin(), targets.end(), t) == targets.end()) targets.push_back(t);
    }
  }
  return targets;
}

}  // namespace smallmind::gateway
