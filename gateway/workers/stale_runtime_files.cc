#include "gateway/workers/stale_runtime_files.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <system_error>

#include <spdlog/spdlog.h>

#include "shared/shm_segment.h"

namespace smallmind::gateway {
namespace {

namespace fs = std::filesystem;

// The pid in "smallmind-<pid>-XXXXXX", or 0 when the name has another shape.
pid_t PidOf(std::string_view name) {
  constexpr std::string_view kPrefix = "smallmind-";
  if (name.substr(0, kPrefix.size()) != kPrefix) return 0;
  name.remove_prefix(kPrefix.size());
  const size_t dash = name.find('-');
  if (dash == 0 || dash == std::string_view::npos || dash > 9) return 0;
  pid_t pid = 0;
  for (char c : name.substr(0, dash)) {
    if (c < '0' || c > '9') return 0;
    pid = pid * 10 + (c - '0');
  }
  return pid;
}

bool ProcessExists(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

// True when some process accepts connections on the Unix socket at `path`.
bool SocketIsLive(const fs::path& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string s = path.string();
  if (s.size() >= sizeof(addr.sun_path)) return false;
  std::memcpy(addr.sun_path, s.c_str(), s.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const bool live = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return live;
}

// True when `path` is ours, of the expected kind, and named after a gateway that is gone.
bool OwnedAndOrphaned(const fs::path& path, bool directory) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || st.st_uid != ::getuid()) return false;
  if (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) return false;
  const pid_t pid = PidOf(path.filename().string());
  return pid > 0 && !ProcessExists(pid);
}

bool IsStaleSocketDir(const fs::path& dir) {
  if (!OwnedAndOrphaned(dir, true)) return false;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_socket(ec) && SocketIsLive(entry.path())) return false;
  }
  return !ec;
}

void ReclaimSocketDirs(const std::string& runtime_dir, std::vector<std::string>& removed) {
  std::error_code ec;
  const fs::path parent = runtime_dir.empty() ? fs::temp_directory_path(ec) : fs::path(runtime_dir);
  if (ec) return;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    if (!IsStaleSocketDir(entry.path())) continue;
    std::error_code remove_error;
    fs::remove_all(entry.path(), remove_error);
    if (remove_error) {
      spdlog::warn("cannot remove the stale worker socket directory {}: {}", entry.path().string(),
                   remove_error.message());
      continue;
    }
    removed.push_back(entry.path().string());
  }
}

void ReclaimKvSegments(std::vector<std::string>& removed) {
  const fs::path shm = fs::path(shared::ShmSegment::PathOf("x")).parent_path();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(shm, ec)) {
    const std::string name = entry.path().filename().string();
    if (!OwnedAndOrphaned(entry.path(), false)) continue;
    {
      // Attaching takes the segment's lock: UNAVAILABLE means a live worker still holds it. One
      // that attaches is removed as it closes, at the end of this block.
      const auto attached = shared::ShmSegment::Attach(name);
      if (!attached.ok() && attached.status().code() == shared::StatusCode::kUnavailable) continue;
    }
    if (shared::ShmSegment::Exists(name)) shared::ShmSegment::Remove(name);
    removed.push_back(entry.path().string());
  }
}

}  // namespace

std::vector<std::string> ReclaimStaleRuntimeFiles(const std::string& runtime_dir) {
  std::vector<std::string> removed;
  ReclaimSocketDirs(runtime_dir, removed);
  ReclaimKvSegments(removed);
  for (const auto& path : removed) {
    spdlog::info("removed {}, left by a gateway that was killed", path);
  }
  return removed;
}

}  // namespace smallmind::gateway
