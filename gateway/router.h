// Worker choice for one request: least-loaded healthy worker, round robin among ties. Called by the
// worker pool for every Generate attempt. Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace smallmind::gateway {

// One worker as the router sees it.
struct WorkerLoad {
  bool healthy = false;
  uint32_t in_flight = 0;  // requests the gateway has open on this worker
};

// Index of the healthy worker with the fewest requests in flight; among equals, the first at or
// after `cursor % loads.size()` going round. std::nullopt when no worker is healthy. Callers
// advance `cursor` once per request so that equal workers take turns.
std::optional<size_t> Route(std::span<const WorkerLoad> loads, uint64_t cursor);

}  // namespace smallmind::gateway
