// RelayOptions: how a RequestRelay buffers and retries (part of GatewayConfig, --max-retries and
// friends). Plain data; thread-compatible.
#pragma once

#include <cstddef>

namespace smallmind::gateway {

// What each request relay may hold and retry.
struct RelayOptions {
  // Worker messages held for a slow client before the worker stream stops being read, which
  // pushes back on the worker through gRPC flow control.
  size_t outbox_capacity = 8;
  // A request that fails with UNAVAILABLE or RESOURCE_EXHAUSTED before its first message is sent
  // again, on another worker, this many times.
  int max_retries = 1;
};

}  // namespace smallmind::gateway
