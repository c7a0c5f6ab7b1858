// smallmind-gateway: flags -> GatewayConfig -> Gateway. SIGTERM/SIGINT drain and stop it, SIGHUP
// reloads the API key file (gateway/signal_policy.h has the rules). Exit codes: 0 after a drain,
// 1 when it cannot start, 2 on a usage error, 130 when a second SIGINT cut the drain short.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
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

int Run(int argc, char** argv) {
  using smallmind::gateway::GatewayConfig;
  smallmind::shared::PrepareGrpcProcess();
  GatewayConfig config;
  CLI::App app{
      "smallmind-gateway: the public gRPC API (smallmind.v1.Inference) in front of workers",
      "smallmind-gateway"};
  smallmind::shared::ConfigureCommandLine(app);
  smallmind::gateway::AddGatewayFlags(app, config);
  if (auto exit_code = smallmind::shared::ParseCommandLineOrExitCode(app, argc, argv)) {
    return *exit_code;
  }
  if (auto status = config.Validate(); !status.ok()) {
    std::fprintf(stderr, "smallmind-gateway: %s\n", status.message().c_str());
    return 2;
  }
  smallmind::shared::InitLogging("gateway", config.log_level);
  if (auto fds = smallmind::shared::RaiseFdLimit(); !fds.ok()) {
    spdlog::warn("{}", fds.status().message());
  } else if (fds->after != fds->before) {
    spdlog::info("open-file limit raised from {} to {}", fds->before, fds->after);
  }
  const double drain_seconds = static_cast<double>(config.drain_timeout.count()) / 1000;

  // Every thread (gRPC's included, created later) inherits this mask, so only the watcher's
  // sigwait takes these signals; SignalPolicy says what each one does.
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&signals, s);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  // The HTTP door (--http-port) runs inside the gateway, beside the gRPC port.
  std::unique_ptr<smallmind::gateway::http::HttpDoor> http_door;
  if (config.http.enabled()) {
    http_door = std::make_unique<smallmind::gateway::http::HttpDoor>(config.http);
  }
  smallmind::gateway::http::HttpDoor* http = http_door.get();
  smallmind::gateway::Gateway gateway(std::move(config));
  if (http_door) gateway.AddDoor(std::move(http_door));
  std::stop_source stop;
  std::atomic<bool> finished{false};
  std::atomic<bool> forced{false};
  std::thread watcher([&] {
    smallmind::gateway::SignalPolicy policy;
    while (true) {
      int signal_number = 0;
      sigwait(&signals, &signal_number);
      if (finished.load()) return;
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
          stop.request_stop();
          break;
        case SignalAction::kKeepDraining:
          spdlog::info("received {} again; still draining", name);
          break;
        case SignalAction::kCancelStreams:
          spdlog::warn("received {} during the drain; cancelling the open streams", name);
          forced.store(true);
          gateway.CancelStreams();
          break;
        case SignalAction::kExitNow:
          spdlog::error("received {} again; exiting without stopping the workers", name);
          std::_Exit(kForcedExitCode);
      }
    }
  });

  int exit_code = 0;
  if (auto status = gateway.Start(stop.get_token()); !status.ok()) {
    if (!stop.stop_requested()) spdlog::error("cannot start: {}", status.ToString());
    exit_code = stop.stop_requested() ? 0 : 1;
  } else {
    if (http) std::printf("smallmind-gateway HTTP at %s\n", http->address().c_str());
    std::printf("smallmind-gateway listening on %s\n", gateway.connect_address().c_str());
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
  }
  gateway.Shutdown();
  finished.store(true);
  ::kill(::getpid(), SIGTERM);  // wakes the watcher if no signal came; it sees `finished`
  watcher.join();
  return forced.load() ? kForcedExitCode : exit_code;
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
