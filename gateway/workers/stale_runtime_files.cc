#include "gateway/workers/stale_runtime_files.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
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

// Seconds since the epoch at which this system booted (/proc/stat's btime); 0 when unknown.
int64_t BootTime() {
  std::ifstream stat("/proc/stat");
  std::string key;
  int64_t value = 0;
  while (stat >> key) {
    if (key == "btime" && stat >> value) return value;
    stat.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return 0;
}

// Whether process `pid` may still be the gateway that made a file last changed at `changed`
// (seconds since the epoch). No: it does not exist, it is a zombie (dead, not yet reaped), or it
// started after the file changed (the pid was reused). Without /proc, existence alone decides.
bool GatewayMayBeAlive(pid_t pid, int64_t changed) {
  if (::kill(pid, 0) != 0 && errno != EPERM) return false;
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(file, line)) return true;
  const size_t paren = line.rfind(')');  // the command name may hold spaces and parentheses
  if (paren == std::string::npos) return true;
  std::istringstream fields(line.substr(paren + 1));
  char state = 0;
  fields >> state;
  if (state == 'Z' || state == 'X') return false;
  std::string skipped;
  for (int i = 4; i < 22; ++i) fields >> skipped;  // ppid .. itrealvalue: fields 4-21
  int64_t start_ticks = 0;
  const int64_t boot = BootTime();
  const long ticks_per_s = ::sysconf(_SC_CLK_TCK);
  if (!(fields >> start_ticks) || boot == 0 || ticks_per_s <= 0) return true;
  return boot + start_ticks / ticks_per_s <= changed + 1;  // 1 s: btime and ticks round down
}

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
  return pid > 0 && !GatewayMayBeAlive(pid, std::min<int64_t>(st.st_mtime, st.st_ctime));
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
