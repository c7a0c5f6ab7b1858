#include "worker/kv/segment_name_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "shared/shm_segment.h"

namespace smallmind::worker {
namespace {

using shared::FailedPrecondition;

// 64 random bits as 16 hex digits.
shared::Result<std::string> RandomSuffix() {
  uint64_t bits = 0;
  size_t got = 0;
  while (got < sizeof(bits)) {
    const ssize_t n = getrandom(reinterpret_cast<char*>(&bits) + got, sizeof(bits) - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return shared::Internal(fmt::format("getrandom: {}", std::strerror(errno)));
    got += static_cast<size_t>(n);
  }
  return fmt::format("{:016x}", bits);
}

// Refuses what another user could have made or could read or change.
shared::Status CheckOwnerOnly(const struct stat& st, const std::string& path, bool directory) {
  const bool kind_ok = directory ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode);
  if (!kind_ok || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
    return FailedPrecondition(fmt::format(
        "{} must be a {} owned by uid {} with no group or other permission (it is owned by uid "
        "{}, mode {:04o}); remove it, or pass --runtime-dir or --kv-segment NAME",
        path, directory ? "directory" : "regular file", geteuid(), st.st_uid, st.st_mode & 07777));
  }
  return shared::Status::Ok();
}

bool IsNameOf(const std::string& name, const std::string& base) {
  return name.size() == base.size() + 17 && name.starts_with(base + "-") &&
         name.find_first_not_of("0123456789abcdef", base.size() + 1) == std::string::npos &&
         shared::ShmSegment::CheckName(name).ok();
}

shared::Result<std::string> ReadName(const std::string& path, const std::string& base) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return shared::NotFound(path);
    return FailedPrecondition(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  }
  struct stat st {};
  shared::Status owned = ::fstat(fd, &st) == 0 ? CheckOwnerOnly(st, path, false)
                                               : FailedPrecondition("cannot stat " + path);
  char buffer[256];
  const ssize_t n = owned.ok() ? ::read(fd, buffer, sizeof(buffer)) : 0;
  ::close(fd);
  SM_RETURN_IF_ERROR(owned);
  std::string name(buffer, n > 0 ? static_cast<size_t>(n) : 0);
  while (!name.empty() && name.back() == '\n') name.pop_back();
  if (!IsNameOf(name, base)) {
    return FailedPrecondition(
        fmt::format("{} holds no KV segment name of {}-<16 hex digits>; remove it to start afresh",
                    path, base));
  }
  return name;
}

// Writes a fresh name to `path`, replacing an old file when `replace`.
shared::Result<std::string> WriteNewName(const std::string& path, const std::string& base,
                                         bool replace) {
  SM_ASSIGN_OR_RETURN(const std::string suffix, RandomSuffix());
  const std::string name = base + "-" + suffix;
  const std::string temp = path + ".new";
  ::unlink(temp.c_str());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return FailedPrecondition(fmt::format("cannot create {}: {}", temp, std::strerror(errno)));
  const std::string line = name + "\n";
  const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  ::close(fd);
  // link() fails when `path` exists: two workers racing for one name file keep the first's.
  const int linked = written ? (replace ? ::rename(temp.c_str(), path.c_str())
                                        : ::link(temp.c_str(), path.c_str()))
                             : -1;
  const int link_errno = errno;
  ::unlink(temp.c_str());
  if (linked != 0 && !replace && link_errno == EEXIST) return ReadName(path, base);
  if (linked != 0) {
    return FailedPrecondition(
        fmt::format("cannot write {}: {}", path, std::strerror(written ? link_errno : errno)));
  }
  return name;
}

}  // namespace

shared::Result<std::string> OwnerOnlyKvDir(const std::string& parent) {
  const std::string dir =
      fmt::format("{}/smallmind-kv-{}", parent.empty() ? "/tmp" : parent, geteuid());
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return FailedPrecondition(fmt::format("cannot make {}: {}", dir, std::strerror(errno)));
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    return FailedPrecondition(fmt::format("cannot stat {}: {}", dir, std::strerror(errno)));
  }
  SM_RETURN_IF_ERROR(CheckOwnerOnly(st, dir, true));
  return dir;
}

shared::Result<std::string> StandaloneSegmentName(const std::string& dir, const std::string& base) {
  const std::string path = dir + "/" + base + ".name";
  shared::Result<std::string> recorded = ReadName(path, base);
  if (recorded.ok() || recorded.status().code() != shared::StatusCode::kNotFound) return recorded;
  return WriteNewName(path, base, /*replace=*/false);
}

shared::Result<std::string> RenewSegmentName(const std::string& dir, const std::string& base) {
  return WriteNewName(dir + "/" + base + ".name", base, /*replace=*/true);
}

void RemoveSegmentName(const std::string& dir, const std::string& base) {
  ::unlink((dir + "/" + base + ".name").c_str());
  ::rmdir(dir.c_str());  // fails, as it should, while another worker's name is there
}

}  // namespace smallmind::worker
