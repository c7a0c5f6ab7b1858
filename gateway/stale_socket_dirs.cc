#include "gateway/stale_socket_dirs.h"

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

bool IsStale(const fs::path& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid()) {
    return false;
  }
  const pid_t pid = PidOf(dir.filename().string());
  if (pid <= 0 || ProcessExists(pid)) return false;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_socket(ec) && SocketIsLive(entry.path())) return false;
  }
  return !ec;
}

}  // namespace

std::vector<std::string> ReclaimStaleSocketDirs(const std::string& runtime_dir) {
  std::error_code ec;
  const fs::path parent = runtime_dir.empty() ? fs::temp_directory_path(ec) : fs::path(runtime_dir);
  std::vector<std::string> removed;
  if (ec) return removed;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    if (!IsStale(entry.path())) continue;
    std::error_code remove_error;
    fs::remove_all(entry.path(), remove_error);
    if (remove_error) {
      spdlog::warn("cannot remove the stale worker socket directory {}: {}", entry.path().string(),
                   remove_error.message());
      continue;
    }
    spdlog::info("removed {}, left by a gateway that was killed", entry.path().string());
    removed.push_back(entry.path().string());
  }
  return removed;
}

}  // namespace smallmind::gateway
