#include "gateway/gateway_config.h"

#include <charconv>
#include <functional>
#include <map>

#include <spdlog/fmt/fmt.h>

namespace smallmind::gateway {
namespace {

using shared::InvalidArgument;
using shared::Status;

Status ParseInt(std::string_view flag, std::string_view text, long lo, long hi, long* out) {
  long v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi) {
    return InvalidArgument(
        fmt::format("{} expects an integer in [{}, {}], got '{}'", flag, lo, hi, text));
  }
  *out = v;
  return Status::Ok();
}

template <typename T>
std::function<Status(std::string_view, std::string_view)> IntSetter(T* field, long lo, long hi) {
  return [field, lo, hi](std::string_view flag, std::string_view text) {
    long v = 0;
    SM_RETURN_IF_ERROR(ParseInt(flag, text, lo, hi, &v));
    *field = static_cast<T>(v);
    return Status::Ok();
  };
}

std::function<Status(std::string_view, std::string_view)> MsSetter(std::chrono::milliseconds* f) {
  return [f](std::string_view flag, std::string_view text) {
    long v = 0;
    SM_RETURN_IF_ERROR(ParseInt(flag, text, 1, 24L * 3600 * 1000, &v));
    *f = std::chrono::milliseconds(v);
    return Status::Ok();
  };
}

std::function<Status(std::string_view, std::string_view)> StringSetter(std::string* field) {
  return [field](std::string_view, std::string_view text) {
    *field = std::string(text);
    return Status::Ok();
  };
}

std::function<Status(std::string_view, std::string_view)> ListSetter(
    std::vector<std::string>* field) {
  return [field](std::string_view, std::string_view text) {
    *field = SplitCommaList(text);
    return Status::Ok();
  };
}

using Setters =
    std::map<std::string, std::function<Status(std::string_view, std::string_view)>, std::less<>>;

Setters MakeSetters(GatewayConfig* c) {
  return {
      {"--model", StringSetter(&c->model)},
      {"--tokenizer", StringSetter(&c->tokenizer)},
      {"--workers", IntSetter(&c->workers, 1, 1024)},
      {"--port", IntSetter(&c->port, 0, 65535)},
      {"--listen-host", StringSetter(&c->listen_host)},
      {"--cpus-per-worker", IntSetter(&c->supervisor.cpus_per_worker, 0, 4096)},
      {"--threads-per-worker", IntSetter(&c->supervisor.threads_per_worker, 0, 4096)},
      {"--worker-endpoints", ListSetter(&c->worker_endpoints)},
      {"--worker-binary", StringSetter(&c->supervisor.worker_binary)},
      {"--runtime-dir", StringSetter(&c->supervisor.runtime_dir)},
      {"--api-keys", ListSetter(&c->api_keys)},
      {"--log-level", StringSetter(&c->log_level)},
      {"--drain-timeout-ms", MsSetter(&c->drain_timeout)},
      {"--ready-timeout-ms", MsSetter(&c->supervisor.ready_timeout)},
      {"--stop-grace-ms", MsSetter(&c->supervisor.stop_grace)},
      {"--outbox", IntSetter(&c->relay.outbox_capacity, 1, 1024)},
  };
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

shared::Result<GatewayConfig> ParseGatewayFlags(int argc, const char* const* argv) {
  GatewayConfig config;
  const Setters setters = MakeSetters(&config);
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::string_view value;
    bool inline_value = false;
    if (const size_t eq = arg.find('='); eq != std::string_view::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      inline_value = true;
    }
    auto it = setters.find(arg);
    if (it == setters.end()) {
      return InvalidArgument(fmt::format("unknown flag '{}'; see --help", arg));
    }
    if (!inline_value) {
      if (i + 1 >= argc) return InvalidArgument(fmt::format("{} needs a value", arg));
      value = argv[++i];
    }
    SM_RETURN_IF_ERROR(it->second(arg, value));
  }
  return config;
}

Status GatewayConfig::Validate() const {
  if (worker_endpoints.empty()) {
    if (model.empty()) return InvalidArgument("--model must not be empty (e.g. builtin:tiny)");
    if (workers < 1) return InvalidArgument(fmt::format("--workers must be >= 1, got {}", workers));
  }
  if (port < 0 || port > 65535) {
    return InvalidArgument(fmt::format("--port must be in [0, 65535], got {}", port));
  }
  if (listen_host.empty()) return InvalidArgument("--listen-host must not be empty");
  for (const auto& key : api_keys) {
    if (key.find_first_of(" \t") != std::string::npos) {
      return InvalidArgument("--api-keys entries must not contain spaces");
    }
  }
  if (supervisor.cpus_per_worker < 0 || supervisor.threads_per_worker < 0) {
    return InvalidArgument("--cpus-per-worker and --threads-per-worker must be >= 0");
  }
  if (relay.outbox_capacity < 1) return InvalidArgument("--outbox must be >= 1");
  if (supervisor.restart_backoff_initial.count() <= 0 ||
      supervisor.restart_backoff_max < supervisor.restart_backoff_initial) {
    return InvalidArgument("restart backoff must be positive and its maximum >= its start");
  }
  return Status::Ok();
}

std::string GatewayUsage() {
  return R"(smallmind-gateway: the public gRPC API (smallmind.v1.Inference) in front of workers.

  --model SPEC              model for spawned workers (default builtin:tiny; a .gguf or .bin path)
  --tokenizer PATH          tokenizer for llama2.c checkpoints (default: the model's own)
  --workers N               workers to spawn (default 2)
  --cpus-per-worker K       CPUs per worker (default: the allowed CPUs split evenly)
  --threads-per-worker K    threads per worker (default: one per CPU of its set)
  --worker-binary PATH      worker executable (default: smallmind-worker beside this binary)
  --worker-endpoints LIST   attach to running workers (host:port,unix:/path,...) instead of spawning
  --listen-host HOST        address to listen on (default 0.0.0.0)
  --port N                  port (default 50051; 0 = any free port, printed on stdout)
  --api-keys K1,K2          require `authorization: Bearer <key>` (or env SMALLMIND_API_KEYS)
  --log-level LEVEL         trace, debug, info, warn, error (default info)
  --drain-timeout-ms MS     how long streams may finish after SIGTERM (default 30000)
  --ready-timeout-ms MS     how long a spawned worker may take to become ready (default 120000)
  --stop-grace-ms MS        SIGTERM to SIGKILL for workers at shutdown (default 10000)
  --runtime-dir DIR         parent of the private worker socket directory ($TMPDIR or /tmp)
  --outbox N                worker messages buffered per slow client (default 8)
)";
}

}  // namespace smallmind::gateway
