// PublicDoor: a public entrance to the gateway besides the gRPC port (the HTTP door in
// gateway/http), on the same relay, admission, routing and keys. main() builds it and hands it to
// Gateway, which starts it once the model is known and drains it beside the gRPC server. Start and
// Shutdown are called from the gateway's one control thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <prometheus/metric_family.h>

#include "gateway/relay/request_relay.h"
#include "shared/status.h"
#include "smallmind/v1/inference.pb.h"

namespace smallmind::gateway {

// What the gateway shares with a door.
struct DoorContext {
  std::shared_ptr<RelayEnv> env;  // relay environment: pool, admission, active count
  smallmind::v1::ModelInfo model_info;
  std::string listen_host;
  // OK when an `authorization` value (nullopt = none sent) may use the service; the gRPC port's
  // check. Null = no keys configured.
  std::function<shared::Status(std::optional<std::string_view>)> authenticate;
  // The Prometheus text of the gateway's registry (what --metrics-port serves); null = none.
  std::function<std::string()> metrics;
  // The same registry's families, for digests of them (the HTTP door's GET /stats); null = none.
  std::function<std::vector<prometheus::MetricFamily>()> metric_families;
  // PEM of the public port's TLS material; empty = plaintext.
  std::string tls_cert_chain_pem;
  std::string tls_private_key_pem;
  std::string tls_client_ca_pem;
};

class PublicDoor {
 public:
  virtual ~PublicDoor() = default;
  // Listening when it returns; errors name what failed (address in use, a template file).
  virtual shared::Status Start(const DoorContext& context) = 0;
  // Stops accepting; requests in flight may finish until `deadline`, then they are cancelled.
  // Returns once they ended (bounded). Idempotent.
  virtual void Shutdown(std::chrono::system_clock::time_point deadline) = 0;
  // Cancels every request in flight now, cutting a drain short (a second SIGINT). Thread-safe.
  virtual void CancelStreams() = 0;
  // "http://127.0.0.1:8000", for the startup line; valid after Start.
  virtual std::string address() const = 0;
};

}  // namespace smallmind::gateway
