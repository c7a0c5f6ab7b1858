// smallmind-gateway: flags -> GatewayConfig -> Gateway; SIGTERM/SIGINT drain and stop it.
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
#include "shared/command_line.h"
#include "shared/log.h"

namespace {

int Run(int argc, char** argv) {
  using smallmind::gateway::GatewayConfig;
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

  // Every thread (gRPC's included, created later) inherits this mask, so only the watcher's
  // sigwait takes the signals: the first asks for an ordered shutdown (also during a long
  // startup), a second one during the drain exits at once.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  std::stop_source stop;
  std::atomic<bool> finished{false};
  std::thread watcher([&] {
    for (int round = 0;; ++round) {
      int signal_number = 0;
      sigwait(&stop_signals, &signal_number);
      if (finished.load()) return;
      if (round > 0) {
        spdlog::error("received {} again; exiting without draining", strsignal(signal_number));
        std::_Exit(1);
      }
      spdlog::info("received {}; shutting down", strsignal(signal_number));
      stop.request_stop();
    }
  });

  smallmind::gateway::Gateway gateway(std::move(config));
  int exit_code = 0;
  if (auto status = gateway.Start(stop.get_token()); !status.ok()) {
    if (!stop.stop_requested()) spdlog::error("cannot start: {}", status.ToString());
    exit_code = stop.stop_requested() ? 0 : 1;
  } else {
    std::printf("smallmind-gateway listening on %s\n", gateway.connect_address().c_str());
    std::fflush(stdout);
    std::mutex mu;
    std::condition_variable_any stopped;
    std::unique_lock<std::mutex> lock(mu);
    stopped.wait(lock, stop.get_token(), [] { return false; });
  }
  gateway.Shutdown();
  finished.store(true);
  ::kill(::getpid(), SIGTERM);  // wakes the watcher if no signal came; it sees `finished`
  watcher.join();
  return exit_code;
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
