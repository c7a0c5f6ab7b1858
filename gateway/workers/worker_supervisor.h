// Spawns the smallmind-worker processes (one per CPU set, sockets in a private dir), waits until
// each is ready, restarts crashed ones with exponential backoff, stops them (SIGTERM, SIGKILL).
// Built by Gateway. Thread-safe; Start and Stop are called from one thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "gateway/workers/worker_options.h"
#include "shared/status.h"

namespace smallmind::gateway {

// How one worker is launched.
struct WorkerLaunch {
  std::string binary;
  std::string model;
  std::string tokenizer;  // "" = none passed
  std::string socket_path;
  uint32_t worker_id = 0;
  std::vector<int> cpus;
  int threads = 1;
  // Shared-memory name of the worker's KV pool, stable across its restarts so a crashed worker's
  // successor re-attaches it (warm restart): smallmind-<pid>-XXXXXX-w<id>. "" = none passed.
  std::string kv_segment;
  std::vector<std::string> extra_flags;  // --worker-flags, last
};

// argv (binary first): --model SPEC [--tokenizer PATH] --listen unix:SOCK --worker-id I --cpus
// LIST --threads K --exit-with-parent [--kv-segment NAME] [extra flags].
std::vector<std::string> WorkerArgv(const WorkerLaunch& launch);

// CPU set of each of `workers` workers: `per_worker` CPUs each (0 = cpus.size() / workers, at
// least 1), taken in order and wrapping round when there are more workers than CPUs.
std::vector<std::vector<int>> SplitCpus(const std::vector<int>& cpus, int workers, int per_worker);

// smallmind-worker in the directory of the running executable (/proc/self/exe).
shared::Result<std::string> DefaultWorkerBinary();

class WorkerSupervisor {
 public:
  // Answers OK once worker `index` serves requests (the gateway asks it for Stats).
  using Probe = std::function<shared::Status(size_t index)>;
  // Told, from the supervision thread, that worker `index` exited and will be restarted.
  using ExitListener = std::function<void(size_t index)>;

  // Plans each worker's CPU set and makes the private socket directory in options.runtime_dir
  // ("" = $TMPDIR, else /tmp); spawns nothing yet. The directory is removed by Stop(), which the
  // destructor calls, so every clean exit of the gateway removes it.
  static shared::Result<std::unique_ptr<WorkerSupervisor>> Create(const std::string& model,
                                                                  const std::string& tokenizer,
                                                                  int workers,
                                                                  SupervisorOptions options);
  ~WorkerSupervisor();
  WorkerSupervisor(const WorkerSupervisor&) = delete;
  WorkerSupervisor& operator=(const WorkerSupervisor&) = delete;

  // gRPC target of each worker: "unix:<runtime_dir>/smallmind-<pid>-XXXXXX/worker-<i>.sock".
  std::vector<std::string> targets() const;
  // Spawns every worker and waits until each passes `probe`; on failure (or once `stop` is
  // requested) stops them all and names the worker that exited or never became ready. Then
  // supervises until Stop().
  shared::Status Start(Probe probe, ExitListener on_exit, std::stop_token stop = {});
  // SIGTERM to every worker, SIGKILL after the grace period, reaps them, removes the socket
  // directory with everything in it. Idempotent.
  void Stop();

  uint64_t restarts_total() const;
  // Restarts of worker `index` (0 for an index out of range).
  uint64_t restarts(size_t index) const;
  // True once restarts_total() >= count, waiting at most `timeout`.
  bool WaitForRestarts(uint64_t count, std::chrono::milliseconds timeout);
  pid_t pid(size_t index) const;  // 0 while not running

 private:
  struct Child {
    WorkerLaunch launch;
    pid_t pid = 0;
    std::chrono::steady_clock::time_point started;
    std::chrono::steady_clock::time_point restart_at;
    std::chrono::milliseconds backoff{0};
    uint32_t restarts = 0;
  };

  WorkerSupervisor(std::string socket_dir, std::vector<Child> children, SupervisorOptions options);
  shared::Status SpawnLocked(Child& child);
  shared::Status WaitReady(size_t index, const Probe& probe, std::stop_token stop);
  void Supervise();
  void RestartDueLocked();
  void TerminateAll();

  const std::string socket_dir_;
  const SupervisorOptions options_;
  ExitListener on_exit_;
  mutable std::mutex mu_;
  std::condition_variable_any wake_;  // also woken by a stop_token
  std::vector<Child> children_;       // guarded by mu_
  uint64_t restarts_total_ = 0;       // guarded by mu_
  bool stopping_ = false;             // guarded by mu_
  bool stopped_ = false;              // guarded by mu_
  std::thread supervisor_;
};

}  // namespace smallmind::gateway
