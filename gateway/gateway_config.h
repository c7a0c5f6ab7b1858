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

#include "gateway/admission/admission_options.h"
#include "gateway/grpc/listener_watch.h"
#include "gateway/http/http_options.h"
#include "gateway/models/keep_alive.h"
#include "gateway/relay/relay_options.h"
#include "gateway/security/tls_options.h"
#include "gateway/workers/worker_options.h"
#include "shared/default_model.h"
#include "shared/request_limits.h"
#include "shared/status.h"

namespace smallmind::gateway {

struct GatewayConfig {
  // --model, once per model ([NAME=]SPEC[,workers=N,threads=N,kv-memory-mb=N]:
  // gateway/models/model_catalog.h); empty and no models_dir = shared::kDefaultModel.
  std::vector<std::string> models;
  // Every *.gguf in this folder is served too, named by its file stem; "" = none.
  std::string models_dir;
  // How long a model's workers stay up after its last request (Ollama's syntax; docs/models.md).
  KeepAlive keep_alive = KeepAlive::Forever();
  // The MiB the loaded models may hold together (file + KV pools, estimated before loading);
  // loading one more unloads the least recently used idle ones first. 0 = no budget.
  int64_t memory_budget_mb = 0;
  std::string tokenizer;  // "" = the model's own
  // The names clients may call the model by (/v1/models, a request's `model`); the first is its
  // id. Empty = the model file's name without its folder (gateway/relay/served_models.h).
  std::vector<std::string> served_model_names;
  int workers = 2;
  std::string listen_host = "0.0.0.0";
  int port = 50051;  // 0 = any free port, printed at startup
  // Prometheus text on http://listen_host:metrics_port/metrics; 0 = any free port (printed at
  // startup), -1 = off.
  int metrics_port = -1;
  // Non-empty: attach to these workers ("host:port" or "unix:/path") instead of spawning; a host
  // name with several addresses is several workers (gateway/workers/worker_endpoints.h).
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
  // The gateway's probes of its own gRPC port (gateway/grpc/listener_watch.h).
  ListenerWatchOptions listener_watch;

  shared::Status Validate() const;
  // The --model flags in effect: `models`, or the default model when neither --model nor
  // --models-dir was given.
  std::vector<std::string> ModelFlags() const;
};

// Binds every flag of the gateway to its field of `config` (whose current values are the defaults
// --help shows); parse with shared::ParseCommandLine. A new flag is a field above plus one line in
// the step of this function that binds its group (and its range in Validate()'s matching step).
void AddGatewayFlags(CLI::App& app, GatewayConfig& config);

// "a,b,,c" -> {"a","b","c"}.
std::vector<std::string> SplitCommaList(std::string_view text);

}  // namespace smallmind::gateway
