// ChildProcess: a real process started by a test (gateway, worker), with its stdout piped so the
// test can wait for a readiness line. Terminate() stops it cleanly; one still running at
// destruction is killed (SIGKILL) and reaped. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "shared/status.h"

namespace smallmind::testing {

class ChildProcess {
 public:
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Starts argv[0] (a path) with argv; stdout is piped, stderr inherited.
  static shared::Result<std::unique_ptr<ChildProcess>> Spawn(const std::vector<std::string>& argv);

  // Reads stdout lines until one contains `needle`; returns that line. Fails when the process
  // closes stdout or `timeout` passes (a bound against hangs, not a speed assertion).
  shared::Result<std::string> WaitForLine(const std::string& needle,
                                          std::chrono::milliseconds timeout);
  void Signal(int sig);
  // Waits for exit (bounded); returns the raw wait status (also once reaped), or -1 on timeout.
  int Wait(std::chrono::milliseconds timeout);
  // SIGTERM, then Wait(grace): a clean stop that lets the process remove what it made. Returns the
  // raw wait status, or -1 when it is still running (the destructor then kills it).
  int Terminate(std::chrono::milliseconds grace);
  pid_t pid() const { return pid_; }

 private:
  ChildProcess(pid_t pid, int stdout_fd) : pid_(pid), stdout_fd_(stdout_fd) {}

  pid_t pid_;
  int stdout_fd_;
  bool reaped_ = false;
  int wait_status_ = -1;  // once reaped_
  std::string buffer_;
};

// Path of a built binary (bin/NAME of the build tree).
std::string BinaryPath(const std::string& name);

}  // namespace smallmind::testing
