// smallmind-gateway: flags -> GatewayConfig -> Gateway. SIGTERM/SIGINT drain and stop it, SIGHUP
// reloads the API key file (gateway/signal_policy.h has the rules). Exit codes: 0 after a drain,
// 1 when it cannot start, 2 on a usage error, 3 when its gRPC port stopped accepting connections
// (gateway/grpc/listener_watch.h), 130 when a second SIGINT cut the drain short.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>

#include <spdlog/spdlog.h>

#include "gateway/gateway.h"
#include "gateway/gateway_config.h"
#include "gateway/http/http_door.h"
#include "gateway/signal_policy.h"
#include "shared/command_line.h"
#include "shared/fd_limit.h"
#include "shared/grpc_process.h"
#include "shared/log.h"

namespace {

using smallmind::gateway::SignalAction;

constexpr int kForcedExitCode = 130;  // 128 + SIGINT, as shells report an interrupted command

using smallmind::gateway::Gateway;
using smallmind::gateway::GatewayConfig;

// Flags -> config; an exit code when the process should end here (--help, --version, a usage
// error).
std::optional<int> ParseConfig(int argc, char** argv, GatewayConfig& config) {
  CLI::App app{
      "smallmind-gateway: the public gRPC API (smallmind.v1.Inference) in front of workers",
      "smallmind-gateway"};
  smallmind::shared::ConfigureCommandLine(app);
  smallmind::gateway::AddGatewayFlags(app, config);
  if (auto exit_code = smallmind::shared::ParseCommandLineOrExitCode(app, argc, argv)) {
    return exit_code;
  }
  if (auto status = config.Validate(); !status.ok()) {
    std::fprintf(stderr, "smallmind-gateway: %s\n", status.message().c_str());
    return 2;
  }
  return std::nullopt;
}

// Soft open-file limit up to the hard one (docs/security.md, "Descriptors"), logged when it moved.
void RaiseOpenFileLimit() {
  if (auto fds = smallmind::shared::RaiseFdLimit(); !fds.ok()) {
    spdlog::warn("{}", fds.status().message());
  } else if (fds->after != fds->before) {
    spdlog::info("open-file limit raised from {} to {}", fds->before, fds->after);
  }
}

// Every thread (gRPC's included, created later) inherits this mask, so only the watcher's
// sigwait takes these signals; SignalPolicy says what each one does.
sigset_t BlockSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&signals, s);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  return signals;
}

// What the signal watcher shares with Run.
struct SignalState {
  std::stop_source stop;
  std::atomic<bool> finished{false};
  std::atomic<bool> forced{false};
  std::atomic<int> fatal_exit_code{0};  // set by the gateway's OnFatal
};

// The watcher thread's body: waits for `signals` until Run sets `finished`.
void WatchSignals(const sigset_t& signals, Gateway& gateway, SignalState& state) {
  smallmind::gateway::SignalPolicy policy;
  while (true) {
    int signal_number = 0;
    sigwait(&signals, &signal_number);
    if (state.finished.load()) return;
    const char* name = strsignal(signal_number);
    switch (policy.Decide(signal_number)) {
      case SignalAction::kReload: {
        // Logged in full by the gateway; one status line on stdout like "listening on".
        const smallmind::shared::Status reloaded = gateway.ReloadApiKeys();
        std::printf("smallmind-gateway %s API keys (%zu in use)\n",
                    reloaded.ok() ? "reloaded" : "kept the", gateway.api_keys()->size());
        std::fflush(stdout);
        break;
      }
      case SignalAction::kDrain:
        spdlog::info("received {}; draining (SIGINT again cancels the open streams)", name);
        state.stop.request_stop();
        break;
      case SignalAction::kKeepDraining:
        spdlog::info("received {} again; still draining", name);
        break;
      case SignalAction::kCancelStreams:
        spdlog::warn("received {} during the drain; cancelling the open streams", name);
        state.forced.store(true);
        gateway.CancelStreams();
        break;
      case SignalAction::kExitNow:
        spdlog::error("received {} again; exiting without stopping the workers", name);
        std::_Exit(kForcedExitCode);
    }
  }
}

// Starts the gateway, prints where it listens and serves until a signal asks to stop; the exit
// code (0 after a drain, 1 when it could not start).
int Serve(Gateway& gateway, const smallmind::gateway::http::HttpDoor* http, std::stop_source& stop,
          double drain_seconds) {
  if (auto status = gateway.Start(stop.get_token()); !status.ok()) {
    if (stop.stop_requested()) return 0;
    spdlog::error("cannot start: {}", status.ToString());
    return 1;
  }
  // The bound address first (a wildcard host is every interface), then where a local client
  // connects: tests and scripts read the line's last word.
  if (http) {
    std::printf("smallmind-gateway HTTP bound to %s, HTTP at %s\n", http->listen_address().c_str(),
                http->address().c_str());
  }
  std::printf("smallmind-gateway listening on %s, connect to %s\n",
              gateway.listen_address().c_str(), gateway.connect_address().c_str());
  if (gateway.metrics_port() >= 0) {
    std::printf("smallmind-gateway metrics on port %d\n", gateway.metrics_port());
  }
  std::fflush(stdout);
  std::mutex mu;
  std::condition_variable_any stopped;
  std::unique_lock<std::mutex> lock(mu);
  stopped.wait(lock, stop.get_token(), [] { return false; });
  std::printf("smallmind-gateway draining for up to %g s\n", drain_seconds);
  std::fflush(stdout);
  return 0;
}

int Run(int argc, char** argv) {
  smallmind::shared::PrepareGrpcProcess();
  GatewayConfig config;
  if (auto exit_code = ParseConfig(argc, argv, config)) return *exit_code;
  smallmind::shared::InitLogging("gateway", config.log_level);
  RaiseOpenFileLimit();
  const double drain_seconds = static_cast<double>(config.drain_timeout.count()) / 1000;
  const sigset_t signals = BlockSignals();
  // The HTTP door (--http-port) runs inside the gateway, beside the gRPC port.
  std::unique_ptr<smallmind::gateway::http::HttpDoor> http_door;
  if (config.http.enabled()) {
    http_door = std::make_unique<smallmind::gateway::http::HttpDoor>(config.http);
  }
  const smallmind::gateway::http::HttpDoor* http = http_door.get();
  Gateway gateway(std::move(config));
  if (http_door) gateway.AddDoor(std::move(http_door));
  SignalState state;
  gateway.OnFatal([&state](int code) {
    state.fatal_exit_code.store(code);
    state.stop.request_stop();
  });
  std::thread watcher([&] { WatchSignals(signals, gateway, state); });
  const int exit_code = Serve(gateway, http, state.stop, drain_seconds);
  gateway.Shutdown();
  state.finished.store(true);
  ::kill(::getpid(), SIGTERM);  // wakes the watcher if no signal came; it sees `finished`
  watcher.join();
  if (state.forced.load()) return kForcedExitCode;
  return state.fatal_exit_code.load() != 0 ? state.fatal_exit_code.load() : exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "smallmind-gateway: fatal: %s\n", e.what());
    return 1;
  }
}
