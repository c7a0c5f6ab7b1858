#include "gateway/grpc/listen_address.h"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include <spdlog/fmt/fmt.h>

namespace smallmind::gateway {
namespace {

using shared::Status;

// Binds one throwaway socket to `addr` and closes it; errno on failure, 0 on success.
int TryBind(const sockaddr* addr, socklen_t len, int family, bool dual_stack) {
  const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  const int one = 1, zero = 0;
  // As gRPC does, so that connections of a gateway that just stopped (TIME_WAIT) do not count.
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (family == AF_INET6) {
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, dual_stack ? &zero : &one, sizeof(one));
  }
  const int rc = ::bind(fd, addr, len);
  const int error = rc == 0 ? 0 : errno;
  ::close(fd);
  return error;
}

Status BindError(int error, const std::string& address) {
  if (error == EADDRINUSE) {
    return shared::Unavailable(fmt::format(
        "{} is already in use (another smallmind-gateway?); stop it or pick another --port",
        address));
  }
  if (error == EADDRNOTAVAIL) {
    return shared::Unavailable(
        fmt::format("cannot listen on {}: the address is not one of this machine's", address));
  }
  return shared::Unavailable(fmt::format("cannot listen on {}: {}", address, std::strerror(error)));
}

// gRPC listens on a wildcard host dual-stack ([::]), falling back to 0.0.0.0 without IPv6.
Status CheckWildcard(int port, const std::string& address) {
  sockaddr_in6 any6{};
  any6.sin6_family = AF_INET6;
  any6.sin6_addr = in6addr_any;
  any6.sin6_port = htons(static_cast<uint16_t>(port));
  int error = TryBind(reinterpret_cast<const sockaddr*>(&any6), sizeof(any6), AF_INET6, true);
  if (error == EAFNOSUPPORT) {
    sockaddr_in any4{};
    any4.sin_family = AF_INET;
    any4.sin_addr.s_addr = htonl(INADDR_ANY);
    any4.sin_port = htons(static_cast<uint16_t>(port));
    error = TryBind(reinterpret_cast<const sockaddr*>(&any4), sizeof(any4), AF_INET, false);
  }
  return error == 0 ? Status::Ok() : BindError(error, address);
}

}  // namespace

std::string FormatListenAddress(const std::string& host, int port) {
  const bool bare_ipv6 = host.find(':') != std::string::npos && host.front() != '[';
  return bare_ipv6 ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

bool IsWildcardHost(const std::string& host) {
  return host == "0.0.0.0" || host == "::" || host == "[::]";
}

Status CheckPortFree(const std::string& host, int port) {
  if (port == 0) return Status::Ok();
  const std::string address = FormatListenAddress(host, port);
  if (IsWildcardHost(host)) return CheckWildcard(port, address);
  std::string name = host;
  if (name.size() > 2 && name.front() == '[' && name.back() == ']') {
    name = name.substr(1, name.size() - 2);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = ::getaddrinfo(name.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return shared::InvalidArgument(
        fmt::format("--listen-host {} does not resolve: {}", host, ::gai_strerror(rc)));
  }
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> list(found, &::freeaddrinfo);
  // gRPC listens on every address the name resolves to; each must be free.
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int error = TryBind(a->ai_addr, a->ai_addrlen, a->ai_family, false);
    if (error != 0) return BindError(error, address);
  }
  return Status::Ok();
}

}  // namespace smallmind::gateway
