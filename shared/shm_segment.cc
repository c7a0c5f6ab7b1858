#include "shared/shm_segment.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>

#include "shared/huge_region.h"

namespace smallmind::shared {

namespace bip = boost::interprocess;

struct ShmSegment::Handle {
  bip::shared_memory_object shm;
  bip::mapped_region region;  // empty while the segment has no bytes
};

namespace {

int NativeFd(const bip::shared_memory_object& shm) { return shm.get_mapping_handle().handle; }

std::string Describe(const bip::interprocess_exception& e) {
  return e.get_native_error() != 0 ? std::strerror(e.get_native_error()) : e.what();
}

// Takes the exclusive advisory lock that says "a live process uses this segment".
Status Lock(const bip::shared_memory_object& shm, const std::string& name) {
  if (::flock(NativeFd(shm), LOCK_EX | LOCK_NB) == 0) return Status::Ok();
  if (errno == EWOULDBLOCK) {
    return Unavailable(fmt::format(
        "shared-memory segment {} is in use by another live process (two workers with the same "
        "--kv-segment name?)",
        ShmSegment::PathOf(name)));
  }
  return Internal(
      fmt::format("cannot lock {}: {}", ShmSegment::PathOf(name), std::strerror(errno)));
}

// A segment this process may trust: owned by its effective uid, no group or other permission bit
// (what Create makes). Anything else may have been planted, or be read, by another local user.
Status CheckOwned(const bip::shared_memory_object& shm, const std::string& name) {
  struct stat st {};
  if (::fstat(NativeFd(shm), &st) != 0) {
    return Internal(
        fmt::format("cannot stat {}: {}", ShmSegment::PathOf(name), std::strerror(errno)));
  }
  if (st.st_uid == ::geteuid() && (st.st_mode & 077) == 0) return Status::Ok();
  return FailedPrecondition(fmt::format(
      "shared-memory segment {} is owned by uid {} with mode {:04o}, not by this process's uid {} "
      "with mode 0600: refusing to use it (another user could read or write it); remove it or "
      "choose another name",
      ShmSegment::PathOf(name), st.st_uid, st.st_mode & 07777, ::geteuid()));
}

}  // namespace

ShmSegment::ShmSegment(std::string name, std::unique_ptr<Handle> handle, bool created)
    : name_(std::move(name)), handle_(std::move(handle)), created_(created) {
  data_ = handle_->region.get_address();
  size_ = handle_->region.get_size();
}

ShmSegment::~ShmSegment() {
  handle_.reset();  // unmaps and closes (which drops the lock)
  if (remove_on_close_) Remove(name_);
}

std::string ShmSegment::PathOf(const std::string& name) { return "/dev/shm/" + name; }

Status ShmSegment::CheckName(const std::string& name) {
  bool ok = !name.empty() && name.size() <= 200 && name[0] != '.';
  for (char c : name) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '_' || c == '-');
  }
  if (ok) return Status::Ok();
  return InvalidArgument(fmt::format(
      "'{}' cannot name a shared-memory segment: use 1-200 characters of A-Z a-z 0-9 . _ - "
      "(not starting with '.')",
      name));
}

Result<std::unique_ptr<ShmSegment>> ShmSegment::Create(const std::string& name, size_t bytes) {
  SM_RETURN_IF_ERROR(CheckName(name));
  auto handle = std::make_unique<Handle>();
  try {
    bip::permissions mode;
    mode.set_permissions(0600);  // Boost applies it with fchmod, so the umask cannot widen it
    handle->shm = bip::shared_memory_object(bip::create_only, name.c_str(), bip::read_write, mode);
  } catch (const bip::interprocess_exception& e) {
    if (e.get_error_code() == bip::already_exists_error) {
      return FailedPrecondition(
          fmt::format("shared-memory segment {} already exists", PathOf(name)));
    }
    return Unavailable(
        fmt::format("cannot create shared-memory segment {}: {}", PathOf(name), Describe(e)));
  }
  // From here on the name exists: remove it again on any failure.
  auto fail = [&](Status s) {
    handle.reset();
    Remove(name);
    return s;
  };
  if (Status s = Lock(handle->shm, name); !s.ok()) return fail(s);
  try {
    handle->shm.truncate(static_cast<bip::offset_t>(bytes));
    if (bytes > 0) handle->region = bip::mapped_region(handle->shm, bip::read_write);
  } catch (const bip::interprocess_exception& e) {
    return fail(
        Unavailable(fmt::format("cannot size or map shared-memory segment {} ({} bytes): {}",
                                PathOf(name), bytes, Describe(e))));
  }
  return std::unique_ptr<ShmSegment>(new ShmSegment(name, std::move(handle), /*created=*/true));
}

Result<std::unique_ptr<ShmSegment>> ShmSegment::Attach(const std::string& name) {
  SM_RETURN_IF_ERROR(CheckName(name));
  auto handle = std::make_unique<Handle>();
  try {
    handle->shm = bip::shared_memory_object(bip::open_only, name.c_str(), bip::read_write);
  } catch (const bip::interprocess_exception& e) {
    if (e.get_error_code() == bip::not_found_error) {
      return NotFound(fmt::format("no shared-memory segment {}", PathOf(name)));
    }
    return Unavailable(fmt::format("cannot open shared-memory segment {}: {} (another user's?)",
                                   PathOf(name), Describe(e)));
  }
  SM_RETURN_IF_ERROR(CheckOwned(handle->shm, name));
  SM_RETURN_IF_ERROR(Lock(handle->shm, name));
  try {
    bip::offset_t size = 0;
    handle->shm.get_size(size);
    if (size > 0) handle->region = bip::mapped_region(handle->shm, bip::read_write);
  } catch (const bip::interprocess_exception& e) {
    return Unavailable(
        fmt::format("cannot map shared-memory segment {}: {}", PathOf(name), Describe(e)));
  }
  return std::unique_ptr<ShmSegment>(new ShmSegment(name, std::move(handle), /*created=*/false));
}

bool ShmSegment::Remove(const std::string& name) {
  if (!CheckName(name).ok()) return false;
  return bip::shared_memory_object::remove(name.c_str());
}

bool ShmSegment::Exists(const std::string& name) {
  struct stat st;
  return CheckName(name).ok() && ::stat(PathOf(name).c_str(), &st) == 0;
}

Status ShmSegment::Reserve() {
  if (size_ == 0) return Status::Ok();
  // Every page allocated and mapped into this process now, contents kept (a re-attached segment
  // holds its predecessor's blocks). Without the mapping each first touch of a 4 KiB tmpfs page is
  // a minor fault, and those come inside the decode steps that first write each KV block:
  // measured on bench-110M Q8_0 (2 threads, 8 streams through a gateway, the first 48 requests
  // after the start) 54,554 faults and 1239-1255 tok/s, against 1597-1610 once every page had been
  // touched. Huge pages are asked for before any page exists, so the pages that then come through
  // this mapping (not fallocate) are huge where the tmpfs gives them: /dev/shm mounted with
  // huge=advise (or more), or /sys/kernel/mm/transparent_hugepage/shmem_enabled "force".
  ::madvise(data_, size_, MADV_HUGEPAGE);
  if (PopulateWrite(data_, size_) == 0) return Status::Ok();
  // An older kernel, or no room: fallocate gives the pages (or says why not), then one touch a
  // page maps them.
  const int fd = NativeFd(handle_->shm);
  if (::fallocate(fd, 0, 0, static_cast<off_t>(size_)) == 0) {
    TouchPages(data_, size_);
    return Status::Ok();
  }
  const int err = errno;
  if (err == EOPNOTSUPP) return Status::Ok();  // not tmpfs: pages come at first touch
  struct statvfs fs;
  std::string free_text;
  if (::fstatvfs(fd, &fs) == 0) {
    free_text = fmt::format(" ({:.1f} MiB free)", fs.f_bavail * double(fs.f_frsize) / 1048576.0);
  }
  return ResourceExhausted(fmt::format(
      "cannot reserve {:.1f} MiB for shared-memory segment {}: {}{}; lower --kv-memory-mb or "
      "give /dev/shm more room (docker: --shm-size)",
      size_ / 1048576.0, PathOf(name_), std::strerror(err), free_text));
}

}  // namespace smallmind::shared
