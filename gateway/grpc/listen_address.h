// The gateway's public listening address: the gRPC form of host:port, and a bind check that runs
// before any worker is spawned, so a port held by another process (a second gateway) is refused at
// once instead of being shared. Called by Gateway::Start. Pure functions; thread-safe.
#pragma once

#include <string>

#include "shared/status.h"

namespace smallmind::gateway {

// "host:port", with a bare IPv6 host bracketed ("::1" -> "[::1]:50051").
std::string FormatListenAddress(const std::string& host, int port);

// True for the hosts that mean every interface: "0.0.0.0", "::", "[::]".
bool IsWildcardHost(const std::string& host);

// OK when a TCP socket could bind `host`:`port` the way gRPC binds it (SO_REUSEADDR, no
// SO_REUSEPORT; a wildcard host binds dual-stack [::]). Port 0 is always OK. UNAVAILABLE naming
// the address when it is in use or not local, INVALID_ARGUMENT when `host` does not resolve.
shared::Status CheckPortFree(const std::string& host, int port);

}  // namespace smallmind::gateway
