#include "gateway/gateway_config.h"

#include <cstdint>
#include <sstream>
#include <string_view>
#include <utility>

#include <spdlog/fmt/fmt.h>

#include "gateway/models/model_catalog.h"
#include "gateway/relay/served_models.h"
#include "shared/log.h"

namespace smallmind::gateway {
namespace {

using shared::InvalidArgument;
using shared::Status;

constexpr int64_t kMaxMs = 24LL * 3600 * 1000;

// An integer flag of milliseconds bound to a duration field.
CLI::Option* AddMilliseconds(CLI::App& app, const std::string& flag,
                             std::chrono::milliseconds& field, const std::string& meaning) {
  return app
      .add_option_function<int64_t>(
          flag, [&field](int64_t ms) { field = std::chrono::milliseconds(ms); }, meaning)
      ->type_name("MS")
      ->default_str(std::to_string(field.count()));
}

// A comma-separated list flag ("a,b,,c" -> {"a","b","c"}).
CLI::Option* AddList(CLI::App& app, const std::string& flag, std::vector<std::string>& field,
                     const std::string& meaning) {
  return app
      .add_option_function<std::string>(
          flag, [&field](const std::string& text) { field = SplitCommaList(text); }, meaning)
      ->type_name("LIST");
}

Status CheckRange(std::string_view flag, int64_t value, int64_t lo, int64_t hi) {
  if (value >= lo && value <= hi) return Status::Ok();
  return InvalidArgument(fmt::format("{} must be in [{}, {}], got {}", flag, lo, hi, value));
}

// What is served, and the names it is served by.
void AddModelFlags(CLI::App& app, GatewayConfig& c) {
  app.add_option("--model", c.models,
                 "a model the spawned workers serve: builtin:NAME, a .gguf file or a llama2.c .bin "
                 "(see smallmind-worker --help), optionally named (NAME=SPEC) and with its own "
                 ",workers=N,threads=N,kv-memory-mb=N; repeat for more models (docs/models.md)")
      ->type_name("[NAME=]SPEC")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->default_str(shared::kDefaultModel);
  app.add_option("--models-dir", c.models_dir,
                 "serve every *.gguf in this folder too, each named by its file stem")
      ->type_name("DIR")
      ->default_str("none");
  app.add_option_function<std::string>(
         "--keep-alive",
         [&c](const std::string& text) {
           shared::Result<KeepAlive> parsed = ParseKeepAlive(text, "--keep-alive");
           if (!parsed.ok()) throw CLI::ValidationError(parsed.status().message());
           c.keep_alive = *parsed;
         },
         "how long a model's workers stay up after its last request: 5m, 30s, 1h, 0 (unload "
         "when idle), -1 or forever (never unload); a request's keep_alive overrides it")
      ->type_name("DURATION")
      ->default_str("forever");
  app.add_option("--memory-budget", c.memory_budget_mb,
                 "MiB the loaded models may hold together (model file + KV pools, estimated); "
                 "loading one more unloads the least recently used idle ones; 0 = no budget")
      ->type_name("MB");
  app.add_option("--tokenizer", c.tokenizer, "tokenizer.bin of a llama2.c checkpoint")
      ->type_name("PATH")
      ->default_str("found beside the model");
  AddList(app, "--served-model-name", c.served_model_names,
          "names clients call the model by (/v1/models; a request's `model`), the first its id; "
          "comma-separated")
      ->type_name("NAME,...")
      ->default_str("the model file's name without its folder");
}

// The workers: spawned (how many, on which CPUs, with which flags) or attached.
void AddWorkerProcessFlags(CLI::App& app, GatewayConfig& c) {
  app.add_option("--workers", c.workers, "workers to spawn");
  app.add_option("--cpus-per-worker", c.supervisor.cpus_per_worker,
                 "CPUs pinned per worker; 0 = the allowed CPUs split evenly");
  app.add_option("--threads-per-worker", c.supervisor.threads_per_worker,
                 "compute threads per worker; 0 = one per CPU of its set");
  app.add_option_function<std::string>(
         "--worker-flags",
         [&c](const std::string& flags) {
           c.supervisor.worker_flags.clear();
           std::istringstream words(flags);
           for (std::string w; words >> w;) c.supervisor.worker_flags.push_back(w);
         },
         "more flags for every worker this gateway spawns, e.g. --worker-flags=\"--kv-memory-mb "
         "4096 --max-seqs 64\" (smallmind-worker --help lists them; the gateway sets --model, "
         "--tokenizer, --listen, --worker-id, --cpus, --threads and --kv-segment itself)")
      ->type_name("\"FLAGS\"");
  app.add_option("--worker-binary", c.supervisor.worker_binary, "worker executable")
      ->type_name("PATH")
      ->default_str("smallmind-worker beside this binary");
  AddList(app, "--worker-endpoints", c.worker_endpoints,
          "attach to running workers (host:port,unix:/path,...) instead of spawning --workers; a "
          "DNS name with several addresses is several workers")
      ->default_str("none");
  AddMilliseconds(app, "--resolve-interval-ms", c.pool.resolve_interval,
                  "how often DNS names in --worker-endpoints are resolved again");
}

// Where the gRPC port and the metrics endpoint listen.
void AddListenFlags(CLI::App& app, GatewayConfig& c) {
  app.add_option("--listen-host", c.listen_host, "address to listen on")->type_name("HOST");
  app.add_option("--port", c.port, "port to listen on; 0 = any free port, printed on stdout");
  app.add_option("--metrics-port", c.metrics_port,
                 "Prometheus /metrics port (HTTP, on --listen-host); 0 = any free port, -1 = off");
}

// API keys and TLS on the public ports.
void AddSecurityFlags(CLI::App& app, GatewayConfig& c) {
  // Keys in the environment stay out of `ps` output; the flag wins when both are given.
  AddList(app, "--api-keys", c.api_keys,
          "require `authorization: Bearer <key>` with one of these keys")
      ->envname("SMALLMIND_API_KEYS")
      ->default_str("none, no auth");
  app.add_option("--api-keys-file", c.api_keys_file,
                 "API keys, one per line ('#' comments), re-read on SIGHUP")
      ->type_name("PATH")
      ->default_str("none");
  app.add_option("--tls-cert", c.tls.cert_file,
                 "PEM certificate chain: serve TLS on --port (with --tls-key)")
      ->type_name("PATH")
      ->default_str("none, plaintext");
  app.add_option("--tls-key", c.tls.key_file, "PEM private key of --tls-cert")
      ->type_name("PATH")
      ->default_str("none");
  app.add_option("--tls-client-ca", c.tls.client_ca_file,
                 "PEM CA certificates: require client certificates they signed (mutual TLS)")
      ->type_name("PATH")
      ->default_str("none");
}

// Logging, start and stop: drain, worker start and stop timeouts, runtime files, outboxes.
void AddLifecycleFlags(CLI::App& app, GatewayConfig& c) {
  app.add_option("--log-level", c.log_level, std::string("one of ") + shared::kLogLevelNames)
      ->type_name("LEVEL");
  app.add_option_function<double>(
         "--drain-seconds",
         [&c](double s) {
           // Out-of-range values are kept visible (as -1) for Validate() to name.
           c.drain_timeout = s >= 0 && s <= kMaxMs / 1000.0
                                 ? std::chrono::milliseconds(static_cast<int64_t>(s * 1000 + 0.5))
                                 : std::chrono::milliseconds(-1);
         },
         "how long streams may finish after SIGTERM before they are cancelled")
      ->type_name("SECONDS")
      ->default_str(fmt::format("{:g}", c.drain_timeout.count() / 1000.0));
  AddMilliseconds(app, "--ready-timeout-ms", c.supervisor.ready_timeout,
                  "how long a spawned worker may take to load and answer");
  AddMilliseconds(app, "--stop-grace-ms", c.supervisor.stop_grace,
                  "SIGTERM to SIGKILL for workers at shutdown");
  app.add_option("--runtime-dir", c.supervisor.runtime_dir,
                 "parent of the private worker socket directory")
      ->type_name("DIR")
      ->default_str("$TMPDIR or /tmp");
  app.add_option("--outbox", c.relay.outbox_capacity, "worker messages buffered per slow client")
      ->type_name("N");
  AddMilliseconds(app, "--listener-probe-ms", c.listener_watch.interval,
                  "how often the gateway probes its own gRPC port (0 = never); NOT_SERVING after "
                  "two probe intervals without an answer");
  AddMilliseconds(app, "--listener-exit-ms", c.listener_watch.exit_after,
                  "exit with status 3 after the gRPC port answered no probe for this long");
}

// The OpenAI-compatible HTTP door and its chat handling.
void AddHttpFlags(CLI::App& app, GatewayConfig& c) {
  app.add_option("--http-port", c.http.port,
                 "serve the OpenAI-compatible HTTP API on this port (0 = any free port)")
      ->default_str("off");
  app.add_option("--http-threads", c.http.threads, "threads of the HTTP server");
  app.add_option("--http-max-connections", c.http.max_connections,
                 "open HTTP connections at most; one more is answered 503 and closed");
  app.add_option("--chat-template", c.http.chat_template_file,
                 "Jinja chat template file for /v1/chat/completions, instead of the model's")
      ->type_name("FILE")
      ->default_str("the model's, else ChatML");
  app.add_option("--tool-call-syntax", c.http.tool_call_syntax,
                 "how the model writes the tool calls it makes on its own (tool_choice auto), "
                 "turned into tool_calls: auto reads it off the chat template")
      ->check(CLI::IsMember({"auto", "none", "hermes", "llama3_json", "mistral"}))
      ->default_str("auto");
  app.add_option("--reasoning-format", c.http.reasoning_format,
                 "a reasoning model's thinking: <think> sections split off into reasoning_content "
                 "(think), gpt-oss's harmony channels split into reasoning_content, content and "
                 "tool_calls (harmony), all left in content (none), or what the chat template "
                 "writes (auto)")
      ->check(CLI::IsMember({"auto", "none", "think", "harmony"}))
      ->default_str("auto");
  app.add_option("--chat-template-date", c.http.chat_template_date,
                 "the date strftime_now() gives chat templates")
      ->type_name("YYYY-MM-DD")
      ->default_str("today");
}

// The gateway queue and routing.
void AddAdmissionFlags(CLI::App& app, GatewayConfig& c) {
  app.add_option("--max-queue", c.admission.max_queue,
                 "requests waiting for a worker slot; more get RESOURCE_EXHAUSTED")
      ->type_name("N");
  app.add_option("--max-in-flight-per-worker", c.admission.max_in_flight_per_worker,
                 "requests open on one worker at a time (the rest wait in the gateway queue); "
                 "0 = no limit")
      ->type_name("N");
  app.add_flag("--deadline-admission,!--no-deadline-admission", c.admission.deadline_admission,
               "refuse at once a request whose deadline the queue ahead makes unreachable");
  app.add_flag("--prefix-affinity,!--no-prefix-affinity", c.pool.route.prefix_affinity,
               "send a prompt to the worker that probably has its prefix cached");
  app.add_option("--affinity-threshold-tokens", c.pool.route.affinity_threshold_tokens,
                 "unless that worker has this many more outstanding tokens than the least loaded")
      ->type_name("N");
}

}  // namespace

std::vector<std::string> SplitCommaList(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    std::string_view piece = text.substr(0, comma);
    if (!piece.empty()) out.emplace_back(piece);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

void AddGatewayFlags(CLI::App& app, GatewayConfig& c) {
  AddModelFlags(app, c);
  AddWorkerProcessFlags(app, c);
  AddListenFlags(app, c);
  AddSecurityFlags(app, c);
  AddLifecycleFlags(app, c);
  AddHttpFlags(app, c);
  AddAdmissionFlags(app, c);
}

namespace {

// Where the workers come from, and the names they serve by.
Status ValidateWorkerSource(const GatewayConfig& c) {
  if (c.worker_endpoints.empty()) {
    for (const std::string& model : c.models) {
      if (model.empty())
        return InvalidArgument("--model must not be empty (e.g. builtin:stories260K)");
    }
    SM_RETURN_IF_ERROR(CheckRange("--workers", c.workers, 1, 1024));
    SM_RETURN_IF_ERROR(
        ModelCatalog::FromFlags(c.ModelFlags(), c.models_dir, c.served_model_names).status());
  } else if (c.models.size() > 1 || !c.models_dir.empty()) {
    return InvalidArgument(
        "--worker-endpoints serves the one model its workers loaded: give no more --model and no "
        "--models-dir");
  }
  SM_RETURN_IF_ERROR(CheckRange("--memory-budget", c.memory_budget_mb, 0, int64_t{1} << 40));
  for (const std::string& endpoint : c.worker_endpoints) {
    SM_RETURN_IF_ERROR(ParseWorkerEndpoint(endpoint).status());
  }
  SM_RETURN_IF_ERROR(ValidateServedModelNames(c.served_model_names));
  SM_RETURN_IF_ERROR(
      CheckRange("--resolve-interval-ms", c.pool.resolve_interval.count(), 100, kMaxMs));
  return Status::Ok();
}

// The public ports and the API keys.
Status ValidateListenAndKeys(const GatewayConfig& c) {
  SM_RETURN_IF_ERROR(CheckRange("--port", c.port, 0, 65535));
  SM_RETURN_IF_ERROR(CheckRange("--metrics-port", c.metrics_port, -1, 65535));
  if (c.listen_host.empty()) return InvalidArgument("--listen-host must not be empty");
  for (const auto& key : c.api_keys) {
    if (key.find_first_of(" \t") != std::string::npos) {
      return InvalidArgument("--api-keys entries must not contain spaces");
    }
  }
  return Status::Ok();
}

// How spawned workers run: CPUs, threads, and the flags the gateway leaves them.
Status ValidateSpawnedWorkers(const GatewayConfig& c) {
  SM_RETURN_IF_ERROR(CheckRange("--cpus-per-worker", c.supervisor.cpus_per_worker, 0, 4096));
  SM_RETURN_IF_ERROR(CheckRange("--threads-per-worker", c.supervisor.threads_per_worker, 0, 4096));
  // The worker flags the supervisor sets itself, and where a user sets them instead.
  static constexpr std::pair<std::string_view, std::string_view> kOwnWorkerFlags[] = {
      {"--model", " (pass --model to the gateway)"},
      {"--tokenizer", " (pass --tokenizer to the gateway)"},
      {"--listen", ""},
      {"--worker-id", ""},
      {"--cpus", " (use --cpus-per-worker)"},
      {"--threads", " (use --threads-per-worker)"},
      {"--kv-segment", ""},
      {"--exit-with-parent", ""}};
  for (const std::string& flag : c.supervisor.worker_flags) {
    const std::string_view name = std::string_view(flag).substr(0, flag.find('='));
    for (const auto& [own, instead] : kOwnWorkerFlags) {
      if (name == own) {
        return InvalidArgument(fmt::format(
            "--worker-flags must not set {}: the gateway sets it for each worker{}", own, instead));
      }
    }
  }
  return Status::Ok();
}

// Logging, TLS, start and stop.
Status ValidateLifecycle(const GatewayConfig& c) {
  if (!shared::IsLogLevelName(c.log_level)) {
    return InvalidArgument(fmt::format("--log-level must be one of {}, got '{}'",
                                       shared::kLogLevelNames, c.log_level));
  }
  if (c.drain_timeout.count() < 0 || c.drain_timeout.count() > kMaxMs) {
    return InvalidArgument(fmt::format("--drain-seconds must be in [0, {}]", kMaxMs / 1000));
  }
  if (c.tls.enabled() != !c.tls.key_file.empty()) {
    return InvalidArgument("--tls-cert and --tls-key go together: give both or neither");
  }
  if (!c.tls.client_ca_file.empty() && !c.tls.enabled()) {
    return InvalidArgument("--tls-client-ca needs --tls-cert and --tls-key");
  }
  SM_RETURN_IF_ERROR(
      CheckRange("--ready-timeout-ms", c.supervisor.ready_timeout.count(), 1, kMaxMs));
  SM_RETURN_IF_ERROR(CheckRange("--stop-grace-ms", c.supervisor.stop_grace.count(), 1, kMaxMs));
  SM_RETURN_IF_ERROR(
      CheckRange("--outbox", static_cast<int64_t>(c.relay.outbox_capacity), 1, 1024));
  const auto& watch = c.listener_watch;
  SM_RETURN_IF_ERROR(CheckRange("--listener-probe-ms", watch.interval.count(), 0, kMaxMs));
  if (watch.interval.count() > 0) {
    SM_RETURN_IF_ERROR(
        CheckRange("--listener-exit-ms", watch.exit_after.count(), watch.interval.count(), kMaxMs));
  }
  return Status::Ok();
}

// The HTTP door, the queue and the restart backoff.
Status ValidateDoorsAndAdmission(const GatewayConfig& c) {
  if (c.http.enabled()) {
    SM_RETURN_IF_ERROR(CheckRange("--http-port", c.http.port, 0, 65535));
    SM_RETURN_IF_ERROR(CheckRange("--http-threads", c.http.threads, 1, 64));
    SM_RETURN_IF_ERROR(CheckRange("--http-max-connections", c.http.max_connections, 1, 1 << 20));
  }
  const std::string& date = c.http.chat_template_date;
  if (!date.empty() && (date.size() != 10 || date[4] != '-' || date[7] != '-')) {
    return InvalidArgument(
        fmt::format("--chat-template-date must be a date YYYY-MM-DD, got '{}'", date));
  }
  SM_RETURN_IF_ERROR(
      CheckRange("--max-queue", static_cast<int64_t>(c.admission.max_queue), 0, 1000000));
  SM_RETURN_IF_ERROR(
      CheckRange("--max-in-flight-per-worker", c.admission.max_in_flight_per_worker, 0, 1000000));
  if (c.supervisor.restart_backoff_initial.count() <= 0 ||
      c.supervisor.restart_backoff_max < c.supervisor.restart_backoff_initial) {
    return InvalidArgument("restart backoff must be positive and its maximum >= its start");
  }
  return Status::Ok();
}

}  // namespace

std::vector<std::string> GatewayConfig::ModelFlags() const {
  if (models.empty() && models_dir.empty()) return {shared::kDefaultModel};
  return models;
}

Status GatewayConfig::Validate() const {
  SM_RETURN_IF_ERROR(ValidateWorkerSource(*this));
  SM_RETURN_IF_ERROR(ValidateListenAndKeys(*this));
  SM_RETURN_IF_ERROR(ValidateSpawnedWorkers(*this));
  SM_RETURN_IF_ERROR(ValidateLifecycle(*this));
  return ValidateDoorsAndAdmission(*this);
}

}  // namespace smallmind::gateway
