#include "gateway/workers/worker_supervisor.h"

#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "shared/cpu_topology.h"
#include "shared/shm_segment.h"

extern char** environ;  // POSIX: the environment handed on to spawned workers

namespace smallmind::gateway {
namespace {

using Clock = std::chrono::steady_clock;
using shared::Status;

// How often exits are reaped and readiness is probed: well under a restart backoff.
constexpr std::chrono::milliseconds kSuperviseInterval{50};
constexpr std::chrono::milliseconds kReapInterval{20};

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += ' ';
    out += w;
  }
  return out;
}

// "exited with code 3" / "was killed by signal 9 (Killed)".
std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with code {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                       strsignal(WTERMSIG(status)));
  }
  return fmt::format("stopped (wait status {})", status);
}

// True when `pid` has exited (and is reaped); `status` gets its wait status.
bool Reaped(pid_t pid, int* status) { return ::waitpid(pid, status, WNOHANG) == pid; }

// Makes the private socket directory <runtime_dir>/smallmind-<pid>-XXXXXX (mode 0700); an empty
// runtime_dir is the system's temporary directory ($TMPDIR, else /tmp).
shared::Result<std::string> MakeSocketDir(const std::string& runtime_dir) {
  std::string parent = runtime_dir;
  if (parent.empty()) {
    std::error_code ec;
    parent = std::filesystem::temp_directory_path(ec).string();
    if (ec) {
      return shared::Unavailable(
          fmt::format("no temporary directory for the worker sockets ($TMPDIR or /tmp: {}); pass "
                      "--runtime-dir",
                      ec.message()));
    }
  }
  std::string dir = fmt::format("{}/smallmind-{}-XXXXXX", parent, static_cast<int>(::getpid()));
  // The longest socket inside (worker-NNNN.sock) must fit sockaddr_un's sun_path with its NUL.
  constexpr size_t kSocketName = sizeof("/worker-0000.sock") - 1;
  if (dir.size() + kSocketName >= sizeof(sockaddr_un::sun_path)) {
    return shared::InvalidArgument(fmt::format(
        "worker socket paths under {} would be longer than the {} bytes a Unix socket path may "
        "have; pass a shorter --runtime-dir (or TMPDIR)",
        parent, sizeof(sockaddr_un::sun_path) - 1));
  }
  if (::mkdtemp(dir.data()) == nullptr) {
    return shared::Unavailable(
        fmt::format("cannot make the worker socket directory {}: {}", dir, std::strerror(errno)));
  }
  return dir;
}

}  // namespace

std::vector<std::string> WorkerArgv(const WorkerLaunch& launch) {
  std::vector<std::string> argv = {launch.binary, "--model", launch.model};
  if (!launch.tokenizer.empty()) {
    argv.insert(argv.end(), {"--tokenizer", launch.tokenizer});
  }
  argv.insert(argv.end(),
              {"--listen", "unix:" + launch.socket_path, "--worker-id",
               std::to_string(launch.worker_id), "--cpus", shared::FormatCpuList(launch.cpus),
               "--threads", std::to_string(launch.threads), "--exit-with-parent"});
  if (!launch.kv_segment.empty()) argv.insert(argv.end(), {"--kv-segment", launch.kv_segment});
  argv.insert(argv.end(), launch.extra_flags.begin(), launch.extra_flags.end());
  return argv;
}

std::vector<std::vector<int>> SplitCpus(const std::vector<int>& cpus, int workers, int per_worker) {
  SM_CHECK(!cpus.empty() && workers > 0) << "SplitCpus needs CPUs and workers";
  const size_t n = cpus.size();
  const size_t per = per_worker > 0 ? static_cast<size_t>(per_worker)
                                    : std::max<size_t>(1, n / static_cast<size_t>(workers));
  std::vector<std::vector<int>> sets(static_cast<size_t>(workers));
  for (size_t w = 0; w < sets.size(); ++w) {
    for (size_t j = 0; j < std::min(per, n); ++j) sets[w].push_back(cpus[(w * per + j) % n]);
    std::sort(sets[w].begin(), sets[w].end());
  }
  return sets;
}

shared::Result<std::string> DefaultWorkerBinary() {
  char buf[PATH_MAX];
  const ssize_t len = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (len <= 0) return shared::Internal("cannot read /proc/self/exe to find smallmind-worker");
  std::string self(buf, static_cast<size_t>(len));
  return self.substr(0, self.rfind('/') + 1) + "smallmind-worker";
}

shared::Result<std::unique_ptr<WorkerSupervisor>> WorkerSupervisor::Create(
    const std::string& model, const std::string& tokenizer, int workers,
    SupervisorOptions options) {
  std::string binary = options.worker_binary;
  if (binary.empty()) {
    SM_ASSIGN_OR_RETURN(binary, DefaultWorkerBinary());
  }
  if (::access(binary.c_str(), X_OK) != 0) {
    return shared::NotFound(fmt::format(
        "worker binary {} is not an executable file ({}); build smallmind-worker or pass "
        "--worker-binary",
        binary, std::strerror(errno)));
  }
  const std::vector<int> allowed = shared::AllowedCpus();
  if (allowed.empty()) return shared::Internal("this process may run on no CPU");
  SM_ASSIGN_OR_RETURN(std::string dir_template, MakeSocketDir(options.runtime_dir));
  const auto sets = SplitCpus(allowed, workers, options.cpus_per_worker);
  std::vector<Child> children(sets.size());
  for (size_t i = 0; i < sets.size(); ++i) {
    WorkerLaunch& l = children[i].launch;
    l = {binary, model, tokenizer, fmt::format("{}/worker-{}.sock", dir_template, i),
         static_cast<uint32_t>(i), sets[i],
         options.threads_per_worker > 0 ? options.threads_per_worker
                                        : static_cast<int>(sets[i].size()),
         // The socket directory's unique name names this gateway instance.
         fmt::format("{}-w{}", std::filesystem::path(dir_template).filename().string(), i),
         options.worker_flags};
  }
  return std::unique_ptr<WorkerSupervisor>(
      new WorkerSupervisor(dir_template, std::move(children), std::move(options)));
}

WorkerSupervisor::WorkerSupervisor(std::string socket_dir, std::vector<Child> children,
                                   SupervisorOptions options)
    : socket_dir_(std::move(socket_dir)),
      options_(std::move(options)),
      children_(std::move(children)) {}

WorkerSupervisor::~WorkerSupervisor() { Stop(); }

std::vector<std::string> WorkerSupervisor::targets() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& c : children_) out.push_back("unix:" + c.launch.socket_path);
  return out;
}

Status WorkerSupervisor::SpawnLocked(Child& child) {
  ::unlink(child.launch.socket_path.c_str());  // a stale socket from a crashed run
  std::vector<std::string> args = WorkerArgv(child.launch);
  std::vector<char*> argv;  // [args + 1], NULL-terminated
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The gateway blocks SIGINT/SIGTERM for sigwait; a worker must get them with default actions.
  // Its own process group keeps a terminal's Ctrl-C from reaching workers before the gateway has
  // drained them.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGCHLD}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, argv[0], nullptr, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return shared::Unavailable(fmt::format("cannot start worker {} ({}): {}",
                                           child.launch.worker_id, args[0], std::strerror(rc)));
  }
  child.pid = pid;
  child.started = Clock::now();
  spdlog::info("started worker {} (pid {}): {}", child.launch.worker_id, pid, Join(args));
  return Status::Ok();
}

Status WorkerSupervisor::Start(Probe probe, ExitListener on_exit, std::stop_token stop) {
  on_exit_ = std::move(on_exit);
  Status status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& child : children_) {
      status = SpawnLocked(child);
      if (!status.ok()) break;
    }
  }
  for (size_t i = 0; status.ok() && i < children_.size(); ++i) status = WaitReady(i, probe, stop);
  if (!status.ok()) {
    Stop();
    return status;
  }
  supervisor_ = std::thread([this] { Supervise(); });
  return Status::Ok();
}

Status WorkerSupervisor::WaitReady(size_t index, const Probe& probe, std::stop_token stop) {
  const auto deadline = Clock::now() + options_.ready_timeout;
  while (true) {
    const Status answer = probe(index);
    if (answer.ok()) return Status::Ok();
    std::unique_lock<std::mutex> lock(mu_);
    Child& child = children_[index];
    int wait_status = 0;
    if (child.pid != 0 && Reaped(child.pid, &wait_status)) {
      const pid_t pid = child.pid;
      child.pid = 0;
      return shared::Unavailable(
          fmt::format("worker {} (pid {}) {} before becoming ready (its log is above); command: {}",
                      index, pid, DescribeWaitStatus(wait_status), Join(WorkerArgv(child.launch))));
    }
    if (Clock::now() >= deadline) {
      return shared::Unavailable(fmt::format(
          "worker {} (pid {}) did not answer Stats within {} ms (last error: {}); command: {}",
          index, child.pid, options_.ready_timeout.count(), answer.ToString(),
          Join(WorkerArgv(child.launch))));
    }
    if (wake_.wait_for(lock, stop, kSuperviseInterval, [this] { return stopping_; }) ||
        stop.stop_requested()) {
      return shared::Status(
          shared::StatusCode::kCancelled,
          fmt::format("stopped while waiting for worker {} to become ready", index));
    }
  }
}

void WorkerSupervisor::Supervise() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    std::vector<size_t> exited;
    const auto now = Clock::now();
    for (size_t i = 0; i < children_.size(); ++i) {
      Child& c = children_[i];
      int wait_status = 0;
      if (c.pid == 0 || !Reaped(c.pid, &wait_status)) continue;
      const bool stable = now - c.started >= options_.stable_uptime;
      c.backoff = (stable || c.backoff.count() == 0)
                      ? options_.restart_backoff_initial
                      : std::min(options_.restart_backoff_max, c.backoff * 2);
      c.restart_at = now + c.backoff;
      spdlog::error("worker {} (pid {}) {}; restarting it in {} ms", i, c.pid,
                    DescribeWaitStatus(wait_status), c.backoff.count());
      c.pid = 0;
      exited.push_back(i);
    }
    RestartDueLocked();
    if (!exited.empty() && on_exit_) {
      lock.unlock();
      for (size_t i : exited) on_exit_(i);
      lock.lock();
    }
    wake_.wait_for(lock, kSuperviseInterval, [this] { return stopping_; });
  }
}

void WorkerSupervisor::RestartDueLocked() {
  const auto now = Clock::now();
  for (auto& c : children_) {
    if (c.pid != 0 || now < c.restart_at) continue;
    const Status s = SpawnLocked(c);
    if (s.ok()) {
      ++c.restarts;
      ++restarts_total_;
      spdlog::info("worker {} restarted (restart {} of this worker)", c.launch.worker_id,
                   c.restarts);
      wake_.notify_all();
    } else {
      c.backoff = std::min(options_.restart_backoff_max, c.backoff * 2);
      c.restart_at = now + c.backoff;
      spdlog::error("{}; trying again in {} ms", s.message(), c.backoff.count());
    }
  }
}

void WorkerSupervisor::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    stopping_ = true;
  }
  wake_.notify_all();
  if (supervisor_.joinable()) supervisor_.join();
  TerminateAll();
}

void WorkerSupervisor::TerminateAll() {
  std::unique_lock<std::mutex> lock(mu_);
  for (auto& c : children_) {
    if (c.pid != 0) ::kill(c.pid, SIGTERM);
  }
  const auto deadline = Clock::now() + options_.stop_grace;
  auto any_alive = [this] {
    bool alive = false;
    for (auto& c : children_) {
      int wait_status = 0;
      if (c.pid != 0 && Reaped(c.pid, &wait_status)) c.pid = 0;
      alive = alive || c.pid != 0;
    }
    return alive;
  };
  while (any_alive() && Clock::now() < deadline) {
    lock.unlock();
    std::this_thread::sleep_for(kReapInterval);  // no event to wait on: children are polled
    lock.lock();
  }
  for (auto& c : children_) {
    if (c.pid == 0) continue;
    spdlog::warn("worker {} (pid {}) still running {} ms after SIGTERM; sending SIGKILL",
                 c.launch.worker_id, c.pid, options_.stop_grace.count());
    ::kill(c.pid, SIGKILL);
    int wait_status = 0;
    ::waitpid(c.pid, &wait_status, 0);
    c.pid = 0;
  }
  // Workers remove their KV segments on a clean exit; these are the ones of workers that did not
  // get there (killed, or crashed and not restarted).
  for (auto& c : children_) {
    if (!c.launch.kv_segment.empty()) shared::ShmSegment::Remove(c.launch.kv_segment);
  }
  // The directory is private (mkdtemp, 0700) and only this gateway's workers put anything in it.
  std::error_code ec;
  std::filesystem::remove_all(socket_dir_, ec);
  if (ec)
    spdlog::error("cannot remove the worker socket directory {}: {}", socket_dir_, ec.message());
}

uint64_t WorkerSupervisor::restarts_total() const {
  std::lock_guard<std::mutex> lock(mu_);
  return restarts_total_;
}

uint64_t WorkerSupervisor::restarts(size_t index) const {
  std::lock_guard<std::mutex> lock(mu_);
  return index < children_.size() ? children_[index].restarts : 0;
}

bool WorkerSupervisor::WaitForRestarts(uint64_t count, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return wake_.wait_for(lock, timeout, [&] { return restarts_total_ >= count; });
}

pid_t WorkerSupervisor::pid(size_t index) const {
  std::lock_guard<std::mutex> lock(mu_);
  return children_[index].pid;
}

}  // namespace smallmind::gateway
