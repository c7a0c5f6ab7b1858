#include "tests/testing/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

extern char** environ;

namespace smallmind::testing {

using Ms = std::chrono::milliseconds;

ChildProcess::~ChildProcess() {
  if (!reaped_) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  if (stdout_fd_ >= 0) close(stdout_fd_);
}

shared::Result<std::unique_ptr<ChildProcess>> ChildProcess::Spawn(
    const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return shared::Internal("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return shared::Internal("cannot start " + argv[0] + ": error " + std::to_string(rc));
  }
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid, fds[0]));
}

shared::Result<std::string> ChildProcess::WaitForLine(const std::string& needle, Ms timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    size_t nl;
    while ((nl = buffer_.find('\n')) != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      if (line.find(needle) != std::string::npos) return line;
    }
    auto left = std::chrono::duration_cast<Ms>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return shared::Status(shared::StatusCode::kDeadlineExceeded,
                            "no line containing '" + needle + "'");
    pollfd p{stdout_fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char chunk[4096];
    ssize_t n = read(stdout_fd_, chunk, sizeof(chunk));
    if (n <= 0) return shared::Unavailable("process closed stdout before '" + needle + "'");
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

void ChildProcess::Signal(int sig) {
  if (!reaped_) kill(pid_, sig);
}

int ChildProcess::Wait(Ms timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!reaped_) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      wait_status_ = status;
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) return -1;
    std::this_thread::sleep_for(Ms(10));
  }
  return wait_status_;
}

int ChildProcess::Terminate(Ms grace) {
  Signal(SIGTERM);
  return Wait(grace);
}

std::string BinaryPath(const std::string& name) {
  return std::string(SMALLMIND_BIN_DIR) + "/" + name;
}

}  // namespace smallmind::testing
