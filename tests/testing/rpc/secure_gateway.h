// A gateway (one builtin:tiny worker) on a free loopback port, started with whatever flags a test
// gives it (TLS, API keys, the HTTP door), for the tests that cannot use GatewayFixture because its
// readiness calls speak plaintext gRPC without a key. Stopped by SIGTERM when destroyed; a gateway
// that does not exit 0 is a test failure.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "shared/status.h"
#include "tests/testing/child_process.h"
#include "tests/testing/scoped_temp_dir.h"

namespace smallmind::testing {

class SecureGateway {
 public:
  // Waits (bounded) for the gateway's "listening on" line, and its "HTTP at" line first when
  // `flags` has --http-port.
  static shared::Result<std::unique_ptr<SecureGateway>> Start(std::vector<std::string> flags);
  ~SecureGateway();
  SecureGateway(const SecureGateway&) = delete;
  SecureGateway& operator=(const SecureGateway&) = delete;

  const std::string& address() const { return address_; }
  // "https://127.0.0.1:PORT" (or http://) of the HTTP door; "" without --http-port.
  const std::string& http_address() const { return http_address_; }
  ChildProcess& process() { return *process_; }
  const std::string& runtime_dir() const { return runtime_.path(); }

 private:
  SecureGateway() = default;
  ScopedTempDir runtime_{"secure"};
  std::unique_ptr<ChildProcess> process_;
  std::string address_;
  std::string http_address_;
};

}  // namespace smallmind::testing
