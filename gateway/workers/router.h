// Worker choice for one request attempt: least-loaded combined with prefix affinity (issue 10
// item 3; README "Routing"). Called by the worker pool for every Generate attempt, over a snapshot
// it takes of the workers. Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace smallmind::gateway {

// One worker as the router sees it.
struct WorkerLoad {
  bool healthy = false;
  uint32_t in_flight = 0;           // requests the gateway has open on this worker
  uint64_t outstanding_tokens = 0;  // their prompt + max_new_tokens, as the gateway estimates them
  double kv_used = 0;               // kv_pages_used / kv_pages_capacity in its last Stats, [0, 1]
  // The longest cut of this request's prompt (shared/prompt_prefix_key.h: 256, 1024, 4096 or
  // 16384 bytes) the worker probably holds in its prefix cache; 0 = none.
  uint32_t prefix_match_bytes = 0;
};

struct RouteOptions {
  bool prefix_affinity = true;
  // The worker holding the prompt's prefix is chosen unless it has more than this many outstanding
  // tokens beyond the least-loaded worker ("much busier").
  uint64_t affinity_threshold_tokens = 2048;
};

struct RouteDecision {
  size_t worker = 0;
  bool by_affinity = false;  // chosen for its cached prefix over a less loaded worker
};

// Least-loaded: the healthy worker with the fewest outstanding tokens, then the fewest requests in
// flight, then the lower KV use, then
// the first at or after `cursor % loads.size()` going round (callers advance `cursor` once per
// request so that equal workers take turns). With prefix affinity, the healthy worker with the
// longest prefix match (the least loaded among equal matches) wins instead, unless it is more
// than affinity_threshold_tokens busier than the least-loaded one. std::nullopt when no worker is
// healthy.
std::optional<RouteDecision> Route(std::span<const WorkerLoad> loads, uint64_t cursor,
                                   const RouteOptions& options = {});

}  // namespace smallmind::gateway
