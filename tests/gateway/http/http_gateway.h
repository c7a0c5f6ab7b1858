// An in-process gateway with its HTTP door, for the door's end-to-end tests.
#pragma once

#include <memory>
#include <utility>

#include "gateway/gateway.h"
#include "gateway/http/http_door.h"
#include "shared/status.h"

namespace smallmind::gateway::testing {

// Builds a gateway on `config`, attaches an HTTP door on config.http and starts them; *door is
// the door (owned by *gateway).
inline shared::Status StartWithHttpDoor(const GatewayConfig& config,
                                        std::unique_ptr<Gateway>* gateway, http::HttpDoor** door) {
  *gateway = std::make_unique<Gateway>(config);
  auto owned = std::make_unique<http::HttpDoor>(config.http);
  *door = owned.get();
  (*gateway)->AddDoor(std::move(owned));
  return (*gateway)->Start();
}

}  // namespace smallmind::gateway::testing
