#include "shared/fd_limit.h"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

namespace smallmind::shared {
namespace {

// /proc/sys/fs/nr_open: the most any process may set; 0 when unknown.
rlim_t NrOpen() {
  std::ifstream file("/proc/sys/fs/nr_open");
  uint64_t n = 0;
  return file >> n ? static_cast<rlim_t>(n) : 0;
}

}  // namespace

Result<FdLimit> RaiseFdLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return Internal(fmt::format("getrlimit(RLIMIT_NOFILE): {}", std::strerror(errno)));
  }
  FdLimit result{limit.rlim_cur, limit.rlim_cur};
  rlim_t target = limit.rlim_max;
  if (const rlim_t nr_open = NrOpen(); nr_open > 0 && target > nr_open) target = nr_open;
  if (target <= limit.rlim_cur) return result;
  limit.rlim_cur = target;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return Internal(fmt::format("cannot raise the open-file limit from {} to {}: {}", result.before,
                                target, std::strerror(errno)));
  }
  result.after = target;
  return result;
}

}  // namespace smallmind::shared
