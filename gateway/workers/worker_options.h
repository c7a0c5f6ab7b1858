// WorkerPoolOptions and SupervisorOptions: how the gateway polls, routes to, spawns and restarts
// its workers (part of GatewayConfig). Plain data; thread-compatible.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "gateway/workers/router.h"
#include "gateway/workers/worker_endpoints.h"

namespace smallmind::gateway {

struct WorkerPoolOptions {
  // How often every worker's Stats is polled; also how fast a restarted worker rejoins.
  std::chrono::milliseconds poll_interval{500};
  std::chrono::milliseconds poll_timeout{1000};
  // A poll that times out while a stream of the worker delivered a message this recently leaves
  // it healthy (slow, not down: a worker tokenizing big prompts answers late but is alive).
  std::chrono::milliseconds progress_window{3000};
  // How often DNS names in --worker-endpoints are looked up again (a scaled StatefulSet shows up
  // within this).
  std::chrono::milliseconds resolve_interval{5000};
  // Not a flag: how names are looked up; empty = ResolveHostWithSystem. Tests inject their names.
  HostResolver resolver;
  // Least-loaded + prefix affinity (gateway/workers/router.h).
  RouteOptions route;
  // Prompt prefix keys remembered per worker for affinity (gateway/workers/prefix_memory.h): at
  // most this many (4 per prompt of 16 KiB or more), each for this long after its last request.
  size_t prefix_keys_per_worker = 4096;
  std::chrono::milliseconds prefix_ttl{300000};
};

struct SupervisorOptions {
  std::string worker_binary;   // "" = smallmind-worker beside this executable
  std::string runtime_dir;     // its private socket dir goes here; "" = $TMPDIR or /tmp
  int cpus_per_worker = 0;     // 0 = the allowed CPUs split evenly over the workers
  int threads_per_worker = 0;  // 0 = one per CPU of the worker's set
  // More flags for every worker it spawns (--worker-flags, split at spaces), after its own.
  std::vector<std::string> worker_flags;
  // Loading a large model takes a while; a worker not answering Stats by then is an error.
  std::chrono::milliseconds ready_timeout{120000};
  std::chrono::milliseconds restart_backoff_initial{250};
  std::chrono::milliseconds restart_backoff_max{16000};
  // A worker that stayed up this long before crashing restarts with the initial backoff again.
  std::chrono::milliseconds stable_uptime{30000};
  // Between SIGTERM and SIGKILL at shutdown.
  std::chrono::milliseconds stop_grace{10000};
};

}  // namespace smallmind::gateway
