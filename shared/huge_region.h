// HugeRegion: an anonymous, zero-filled memory region that asks the kernel for transparent huge
// pages (madvise MADV_HUGEPAGE, 2 MiB aligned), for data streamed every engine step (the packed
// weights): one TLB entry per 2 MiB instead of per 4 KiB, and the hardware prefetchers, which stop
// at page boundaries, run across a whole huge page. Where THP is off ("never") or the advice fails,
// the region is ordinary 4 KiB pages and still correct. Move-only; not thread-safe to reset.
#pragma once

#include <cstddef>
#include <string>

#include "shared/status.h"

namespace smallmind::shared {

class HugeRegion {
 public:
  HugeRegion() = default;
  // A region of at least `bytes` (0: none); ResourceExhausted when it cannot be mapped.
  static Result<HugeRegion> Map(size_t bytes);
  // Map(bytes), aborting when the memory cannot be mapped.
  explicit HugeRegion(size_t bytes);
  ~HugeRegion();
  HugeRegion(HugeRegion&& other) noexcept;
  HugeRegion& operator=(HugeRegion&& other) noexcept;
  HugeRegion(const HugeRegion&) = delete;
  HugeRegion& operator=(const HugeRegion&) = delete;

  // Faults every page in now (zeroed), so that no later write pays a page fault: the KV cache
  // calls it at start, keeping page faults out of decode steps. ResourceExhausted when the kernel
  // has not the memory.
  Status Prefault();

  std::byte* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void Release();

  void* map_ = nullptr;  // the whole mapping (alignment slack included)
  size_t map_bytes_ = 0;
  std::byte* data_ = nullptr;  // 2 MiB aligned
  size_t size_ = 0;
};

// Maps every page of [p, p + bytes) into this process, writable, now, keeping its contents:
// madvise(MADV_POPULATE_WRITE) (Linux 5.14+) in 64 MiB pieces on up to 8 threads (mapping a
// 4 KiB page costs a page fault's work: 2.3 GiB of /dev/shm took 2.4-2.5 s on one thread of a
// 2-core AMD EPYC Zen 5 VM, 1.3-2.3 s on two). 0, or the errno of a piece that failed (EINVAL:
// an older kernel; ENOMEM or EFAULT: no memory for a page).
int PopulateWrite(void* p, size_t bytes);
// The same by one write a 4 KiB page (each page's first byte written back), for kernels without
// MADV_POPULATE_WRITE: a page there that cannot be had is a SIGBUS or the OOM killer.
void TouchPages(void* p, size_t bytes);

// The kernel's transparent huge page mode for anonymous memory ("always", "madvise" or "never",
// from /sys/kernel/mm/transparent_hugepage/enabled), or "unavailable" (no THP support): a
// HugeRegion gets huge pages under "always" and "madvise".
std::string TransparentHugePages();

// Bytes of [p, p + bytes) the kernel backs with huge pages now (AnonHugePages, or ShmemPmdMapped
// for shared memory, of the mappings that overlap the range, from /proc/self/smaps, counted only
// inside the range); 0 when unknown.
size_t HugePageBytes(const void* p, size_t bytes);

// Bytes of [p, p + bytes) this process has resident now (Rss of the mappings that overlap the
// range, from /proc/self/smaps, counted only inside the range): pages of a mapped file it has
// touched and not dropped, anonymous pages written; 0 when unknown. Parses smaps: ~1 ms, not for
// a hot path.
size_t ResidentBytes(const void* p, size_t bytes);

}  // namespace smallmind::shared
