// smallmind-worker: flags -> WorkerConfig -> Worker::Start(); SIGTERM/SIGINT shut it down. An
// exception that escapes (std, Boost or protobuf) is reported and exits 1, as the gateway does.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <thread>

#include <spdlog/spdlog.h>

#include "shared/fd_limit.h"
#include "shared/grpc_process.h"
#include "shared/log.h"
#include "worker/worker.h"

namespace {

int Run(int argc, char** argv) {
  using smallmind::shared::StatusCode;
  smallmind::shared::PrepareGrpcProcess();
  auto config = smallmind::worker::ParseWorkerFlags(argc, argv);
  if (!config.ok()) {
    bool help = config.status().code() == StatusCode::kNotFound;
    std::fprintf(help ? stdout : stderr, "%s\n", config.status().message().c_str());
    return help ? 0 : 2;
  }
  smallmind::shared::InitLogging("worker-" + std::to_string(config->worker_id), config->log_level);
  if (auto fds = smallmind::shared::RaiseFdLimit(); !fds.ok()) {
    spdlog::warn("{}", fds.status().message());
  } else if (fds->after != fds->before) {
    spdlog::info("open-file limit raised from {} to {}", fds->before, fds->after);
  }

  // Signals are taken by one thread with sigwait, so no handler runs inside library code.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  if (config->exit_with_parent) {
    // A gateway killed with SIGKILL cannot stop its workers; the kernel does it for us.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() == 1) return 1;  // the parent died before prctl took effect
  }

  smallmind::worker::Worker worker(std::move(config).value());
  smallmind::shared::Status started = worker.Start();
  if (!started.ok()) {
    spdlog::error("worker failed to start: {}", started.ToString());
    return 1;
  }
  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    spdlog::info("signal {} received, shutting down", sig);
    worker.Shutdown();
  });
  worker.Wait();
  signal_thread.join();
  spdlog::info("worker stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "smallmind-worker: fatal: %s\n", e.what());
    return 1;
  }
}
