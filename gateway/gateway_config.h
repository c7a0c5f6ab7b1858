// GatewayConfig: everything the gateway process is configured with (STYLE §21), with its nested
// option structs and defaults in place. AddGatewayFlags binds it to the command line, parsed once
// in main(); Validate() checks the ranges. Plain data; thread-compatible.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "gateway/router.h"
#include "gateway/worker_endpoints.h"
#include "shared/default_model.h"
#include "shared/request_limits.h"
#include "shared/status.h"

namespace smallmind::gateway {

struct RelayOptions {
  // Worker messages held for a slow client before the worker stream stops being read, which
  // pushes back on the worker through gRPC flow control.
  size_t outbox_capacity = 8;
  // A request that fails with UNAVAILABLE or RESOURCE_EXHAUSTED before its first message is sent
  // again, on another worker, this many times.
  int max_retries = 1;
};

// The gateway queue (gateway/admission_queue.h; README "Admission and deadlines").
struct AdmissionOptions {
  // Requests waiting for a worker slot; one more gets RESOURCE_EXHAUSTED with a retry hint.
  size_t max_queue = 256;
  // Requests the gateway keeps open on one worker at a time (the worker's --max-seqs default:
  // one batch); 0 = no limit, and then nothing waits in the gateway queue.
  uint32_t max_in_flight_per_worker = 32;
  // Refuse at once (DEADLINE_EXCEEDED) a request whose deadline the queue ahead of it makes
  // unreachable, by the measured prefill and decode rates.
  bool deadline_admission = true;
  // The retry hint before any request finished (nothing measured yet).
  std::chrono::milliseconds retry_after_unmeasured{1000};
  // How often a non-empty queue re-reads the slot count (a worker coming back adds slots).
  std::chrono::milliseconds recheck{100};
};

struct WorkerPoolOptions {
  // How often every worker's Stats is polled; also how fast a restarted worker rejoins.
  std::chrono::milliseconds poll_interval{500};
  std::chrono::milliseconds poll_timeout{1000};
  // How often DNS names in --worker-endpoints are looked up again (a scaled StatefulSet shows up
  // within this).
  std::chrono::milliseconds resolve_interval{5000};
  // Not a flag: how names are looked up; empty = ResolveHostWithSystem. Tests inject their names.
  HostResolver resolver;
  // Least-loaded + prefix affinity (gateway/router.h).
  RouteOptions route;
  // Prompt prefix keys remembered per worker for affinity (gateway/prefix_memory.h): at most
  // this many (4 per prompt of 16 KiB or more), each for this long after its last request.
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

// TLS on the public port (see gateway/tls_credentials.h); off while cert_file is empty.
struct TlsOptions {
  std::string cert_file;       // PEM certificate chain, server certificate first
  std::string key_file;        // PEM private key of that certificate, unencrypted
  std::string client_ca_file;  // non-empty: mutual TLS, client certificates signed by this CA
  bool enabled() const { return !cert_file.empty(); }
};

// The OpenAI-compatible HTTP door (gateway/http), off unless --http-port is given.
struct HttpOptions {
  int port = -1;  // -1 = off; 0 = any free port
  int threads = 2;
  std::string chat_template_file;  // "" = the model's own template (ChatML when it has none)
  std::string chat_template_date;  // "YYYY-MM-DD" pins strftime_now; "" = today
  // How the model writes the tool calls it makes on its own: "auto" (read off the chat
  // template), "none", "hermes", "llama3_json" or "mistral" (gateway/http/tool_call_syntax.h).
  std::string tool_call_syntax = "auto";
  // Reasoning models' <think> sections: "auto" (split off into reasoning_content when the chat
  // template writes them), "think" (always), "none" (left in content).
  std::string reasoning_format = "auto";
  size_t max_body_bytes = shared::kMaxRequestBytes;
  bool enabled() const { return port >= 0; }
};

struct GatewayConfig {
  std::string model = shared::kDefaultModel;
  std::string tokenizer;  // "" = the model's own
  int workers = 2;
  std::string listen_host = "0.0.0.0";
  int port = 50051;  // 0 = any free port, printed at startup
  // Prometheus text on http://listen_host:metrics_port/metrics; 0 = any free port (printed at
  // startup), -1 = off.
  int metrics_port = -1;
  // Non-empty: attach to these workers ("host:port" or "unix:/path") instead of spawning; a host
  // name with several addresses is several workers (gateway/worker_endpoints.h).
  std::vector<std::string> worker_endpoints;
  // Non-empty: Generate, Tokenize and GetModelInfo need `authorization: Bearer <key>`.
  std::vector<std::string> api_keys;
  // Non-empty: more keys, one per line, re-read on SIGHUP (keeps them out of `ps` and the env).
  std::string api_keys_file;
  TlsOptions tls;
  std::string log_level = "info";
  // How long in-flight streams may run on after SIGTERM before they are cancelled (0: at once).
  std::chrono::milliseconds drain_timeout{30000};
  // With worker_endpoints: how long to wait for one of them to answer at startup.
  std::chrono::milliseconds attach_timeout{60000};
  SupervisorOptions supervisor;
  WorkerPoolOptions pool;
  RelayOptions relay;
  HttpOptions http;
  AdmissionOptions admission;

  shared::Status Validate() const;
};

// Binds every flag of the gateway to its field of `config` (whose current values are the defaults
// --help shows); parse with shared::ParseCommandLine. A new flag is a field above plus one line in
// this function (and its range in Validate()).
void AddGatewayFlags(CLI::App& app, GatewayConfig& config);

// "a,b,,c" -> {"a","b","c"}.
std::vector<std::string> SplitCommaList(std::string_view text);

}  // namespace smallmind::gateway
