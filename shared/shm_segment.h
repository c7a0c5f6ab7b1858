// ShmSegment: one named POSIX shared-memory segment (/dev/shm/<name>, Boost.Interprocess), mapped
// read-write, mode 0600, and held under an exclusive advisory lock while this object lives, so two
// live processes never use one segment (the kernel drops the lock when its holder dies, which is
// how a successor tells a crashed owner's segment from a live one). Removed on destruction unless
// told to keep it. Used by the worker's KV pool; the gateway removes its workers' segments by name.
// Thread-compatible.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "shared/status.h"

namespace smallmind::shared {

class ShmSegment {
 public:
  ~ShmSegment();
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  // Creates segment `name` of `bytes` zero bytes, mode 0600; fails (FailedPrecondition) when it
  // already exists.
  static Result<std::unique_ptr<ShmSegment>> Create(const std::string& name, size_t bytes);
  // Maps the existing segment `name` at its current size. NotFound when there is none;
  // FailedPrecondition when it is not owned by this process's effective uid or has any group or
  // other permission bit (planted or readable by another user: never attached); Unavailable when
  // a live process holds it.
  static Result<std::unique_ptr<ShmSegment>> Attach(const std::string& name);
  // Unlinks segment `name` (mappings stay valid until unmapped); true when it existed.
  static bool Remove(const std::string& name);
  static bool Exists(const std::string& name);
  // Where the name lives on Linux, for messages and tests: "/dev/shm/<name>".
  static std::string PathOf(const std::string& name);
  // OK when `name` can name a segment: 1-200 characters of [A-Za-z0-9._-], not starting with '.'.
  static Status CheckName(const std::string& name);

  // Gives the segment its memory now and maps every page into this process (keeping the bytes),
  // so that a /dev/shm too small for it is an error here rather than a SIGBUS at the first write,
  // and no page fault is left for the decode steps. Huge pages where the tmpfs allows them.
  Status Reserve();

  void* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& name() const { return name_; }
  bool created() const { return created_; }  // false: attached to an existing segment
  // Whether the destructor unlinks the name (default true: removed on clean exit).
  void set_remove_on_close(bool remove) { remove_on_close_ = remove; }

 private:
  struct Handle;
  ShmSegment(std::string name, std::unique_ptr<Handle> handle, bool created);

  std::string name_;
  std::unique_ptr<Handle> handle_;
  void* data_ = nullptr;
  size_t size_ = 0;
  bool created_ = false;
  bool remove_on_close_ = true;
};

}  // namespace smallmind::shared
