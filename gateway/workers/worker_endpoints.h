// --worker-endpoints: each entry is a fixed gRPC target ("unix:/path", an IP literal with its port)
// or a DNS name with a port, which stands for one worker per address it resolves to (a Kubernetes
// headless Service). WorkerEndpoints turns the list into the current targets, looking the names up
// again on each Resolve(). Owned by the WorkerPool, which serializes its calls; thread-compatible.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "shared/status.h"

namespace smallmind::gateway {

// One --worker-endpoints entry, parsed.
struct WorkerEndpoint {
  std::string spec;    // as given
  std::string target;  // the gRPC target when fixed; empty for a name
  std::string host;    // the DNS name; empty when fixed
  int port = 0;        // with `host`
  bool is_name() const { return !host.empty(); }
};

// "unix:/path" (and gRPC's other scheme-prefixed targets: unix-abstract:, ipv4:, ipv6:, dns:) and
// IP literals ("10.0.0.7:50061", "[fd00::7]:50061") are fixed; "name:port" is a DNS name.
// INVALID_ARGUMENT naming the entry when it is neither (no port, port out of range, a bare IPv6
// address, characters no host name has).
shared::Result<WorkerEndpoint> ParseWorkerEndpoint(std::string_view spec);

// Resolves a host name to its numeric addresses ("10.0.0.7", "fd00::7"). An empty list means the
// name has no address now (NXDOMAIN: a headless Service with no ready pod); an error means the
// lookup itself failed (no DNS server answered), so the caller keeps what it had.
using HostResolver =
    std::function<shared::Result<std::vector<std::string>>(const std::string& host)>;

// getaddrinfo (AF_UNSPEC, TCP, AI_ADDRCONFIG): /etc/hosts, then DNS, as nsswitch.conf says.
// Addresses sorted and without duplicates, so the order does not follow DNS round robin.
shared::Result<std::vector<std::string>> ResolveHostWithSystem(const std::string& host);

// The gRPC target of a numeric address: "10.0.0.7:50061", "[fd00::7]:50061".
std::string AddressTarget(std::string_view address, int port);

class WorkerEndpoints {
 public:
  // An entry that does not parse is passed to gRPC as it is (GatewayConfig::Validate has refused
  // such entries before the gateway gets here). An empty `resolver` means ResolveHostWithSystem.
  WorkerEndpoints(const std::vector<std::string>& specs, HostResolver resolver);

  // True when some entry is a DNS name, so that Resolve() can change its answer.
  bool has_names() const { return has_names_; }

  // The targets of every entry, in the order given (a name's addresses sorted), each once. A name
  // whose lookup fails keeps its previous addresses; the failure is logged once per change.
  std::vector<std::string> Resolve();

 private:
  std::vector<WorkerEndpoint> endpoints_;
  HostResolver resolver_;
  bool has_names_ = false;
  std::vector<std::vector<std::string>> last_targets_;  // [endpoints]: the last good answer
  std::vector<std::string> last_error_;  // [endpoints]: "" when the last lookup worked
};

}  // namespace smallmind::gateway
