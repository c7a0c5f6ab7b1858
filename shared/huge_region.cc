#include "shared/huge_region.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <thread>
#include <utility>
#include <vector>

#include "shared/check.h"

namespace smallmind::shared {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

Result<HugeRegion> HugeRegion::Map(size_t bytes) {
  HugeRegion r;
  if (bytes == 0) return r;
  // Map one huge page more than needed and use the 2 MiB aligned part: THP only backs aligned
  // 2 MiB ranges.
  const size_t map_bytes = RoundUp(bytes, kHugePage) + kHugePage;
  void* map = mmap(nullptr, map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) {
    return ResourceExhausted("cannot map " + std::to_string(bytes / 1048576.0) +
                             " MiB: " + std::strerror(errno));
  }
  r.map_ = map;
  r.map_bytes_ = map_bytes;
  r.size_ = bytes;
  r.data_ = reinterpret_cast<std::byte*>(RoundUp(reinterpret_cast<uintptr_t>(map), kHugePage));
  // Advice only: without THP the region is ordinary pages.
  madvise(r.data_, RoundUp(bytes, kHugePage), MADV_HUGEPAGE);
  return r;
}

HugeRegion::HugeRegion(size_t bytes) {
  Result<HugeRegion> r = Map(bytes);
  SM_CHECK(r.ok()) << r.status().ToString();
  *this = std::move(r).value();
}

Status HugeRegion::Prefault() {
  if (size_ == 0) return Status::Ok();
  const int err = PopulateWrite(data_, RoundUp(size_, kHugePage));
  if (err == ENOMEM || err == EFAULT) {
    return ResourceExhausted("cannot fault in " + std::to_string(size_ / 1048576.0) +
                             " MiB: not enough memory");
  }
  if (err != 0) TouchPages(data_, size_);
  return Status::Ok();
}

HugeRegion::~HugeRegion() { Release(); }

HugeRegion::HugeRegion(HugeRegion&& other) noexcept { *this = std::move(other); }

HugeRegion& HugeRegion::operator=(HugeRegion&& other) noexcept {
  if (this != &other) {
    Release();
    map_ = std::exchange(other.map_, nullptr);
    map_bytes_ = std::exchange(other.map_bytes_, 0);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void HugeRegion::Release() {
  if (map_ != nullptr) munmap(map_, map_bytes_);
  map_ = nullptr;
  map_bytes_ = 0;
  data_ = nullptr;
  size_ = 0;
}

int PopulateWrite(void* p, size_t bytes) {
  constexpr size_t kPiece = size_t{64} << 20;
  const size_t pieces = (bytes + kPiece - 1) / kPiece;
  const size_t threads =
      std::min<size_t>({pieces, 8, std::max(1u, std::thread::hardware_concurrency())});
  std::atomic<size_t> next{0};
  std::atomic<int> failed{0};
  auto work = [&] {
    for (size_t i = next++; i < pieces && failed.load(std::memory_order_relaxed) == 0; i = next++) {
      auto* begin = static_cast<std::byte*>(p) + i * kPiece;
      if (madvise(begin, std::min(kPiece, bytes - i * kPiece), MADV_POPULATE_WRITE) != 0) {
        failed.store(errno, std::memory_order_relaxed);
      }
    }
  };
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < threads; t++) helpers.emplace_back(work);
  work();
  for (std::thread& t : helpers) t.join();
  return failed.load();
}

void TouchPages(void* p, size_t bytes) {
  auto* b = static_cast<volatile std::byte*>(p);
  for (size_t i = 0; i < bytes; i += 4096) b[i] = b[i];
}

std::string TransparentHugePages() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!std::getline(in, line)) return "unavailable";
  const size_t open = line.find('['), close = line.find(']');  // "always [madvise] never"
  if (open == std::string::npos || close == std::string::npos || close < open) return "unavailable";
  return line.substr(open + 1, close - open - 1);
}

namespace {

// The sum over the mappings of /proc/self/smaps that overlap [p, p + bytes) of the first of
// `fields` ("Name:" lines, in kB) each mapping has, each capped at the mapping's overlap with the
// range (a mapping's pages may lie anywhere in it).
size_t SumSmapsField(const void* p, size_t bytes, std::initializer_list<const char*> fields) {
  if (p == nullptr || bytes == 0) return 0;
  const auto lo = reinterpret_cast<uintptr_t>(p), hi = lo + bytes;
  std::ifstream in("/proc/self/smaps");
  std::string line;
  uintptr_t begin = 0, end = 0;  // the current mapping
  size_t total = 0;
  while (std::getline(in, line)) {
    unsigned long long b = 0, e = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx ", &b, &e) == 2 && line.find('-') < line.find(' ')) {
      begin = b;
      end = e;
      continue;
    }
    if (end <= lo || begin >= hi) continue;
    for (const char* field : fields) {
      unsigned long long kb = 0;
      if (line.starts_with(field) &&
          std::sscanf(line.c_str() + std::strlen(field), " %llu kB", &kb) == 1) {
        const size_t overlap = std::min<uintptr_t>(end, hi) - std::max<uintptr_t>(begin, lo);
        total += std::min<size_t>(static_cast<size_t>(kb) * 1024, overlap);
      }
    }
  }
  return total;
}

}  // namespace

size_t HugePageBytes(const void* p, size_t bytes) {
  // Private memory's huge pages, or shared memory's (a tmpfs mapping: ShmemPmdMapped).
  return SumSmapsField(p, bytes, {"AnonHugePages:", "ShmemPmdMapped:"});
}

size_t ResidentBytes(const void* p, size_t bytes) { return SumSmapsField(p, bytes, {"Rss:"}); }

}  // namespace smallmind::shared
