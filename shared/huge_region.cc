#include "shared/huge_region.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <utility>

#include "shared/check.h"

namespace smallmind::shared {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

HugeRegion::HugeRegion(size_t bytes) {
  if (bytes == 0) return;
  size_ = bytes;
  // Map one huge page more than needed and use the 2 MiB aligned part: THP only backs aligned
  // 2 MiB ranges.
  map_bytes_ = RoundUp(bytes, kHugePage) + kHugePage;
  map_ = mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  SM_CHECK(map_ != MAP_FAILED) << "cannot map " << map_bytes_ << " bytes: " << std::strerror(errno);
  const auto begin = reinterpret_cast<uintptr_t>(map_);
  data_ = reinterpret_cast<std::byte*>(RoundUp(begin, kHugePage));
  // Advice only: without THP the region is ordinary pages.
  madvise(data_, RoundUp(bytes, kHugePage), MADV_HUGEPAGE);
}

void HugeRegion::Prefault() {
  if (size_ == 0) return;
  // One call where the kernel has it (Linux 5.14+); otherwise one write per 4 KiB page.
  if (madvise(data_, RoundUp(size_, kHugePage), MADV_POPULATE_WRITE) == 0) return;
  SM_CHECK(errno != ENOMEM && errno != EFAULT)
      << "cannot fault in " << size_ / 1048576.0 << " MiB: not enough memory";
  for (size_t i = 0; i < size_; i += 4096) {
    reinterpret_cast<volatile std::byte*>(data_)[i] = std::byte{0};
  }
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

std::string TransparentHugePages() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!std::getline(in, line)) return "unavailable";
  const size_t open = line.find('['), close = line.find(']');  // "always [madvise] never"
  if (open == std::string::npos || close == std::string::npos || close < open) return "unavailable";
  return line.substr(open + 1, close - open - 1);
}

size_t HugePageBytes(const void* p, size_t bytes) {
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
    unsigned long long kb = 0;
    if (end > lo && begin < hi && std::sscanf(line.c_str(), "AnonHugePages: %llu kB", &kb) == 1) {
      // A mapping's huge pages lie anywhere in it: count at most its overlap with the range.
      const size_t overlap = std::min<uintptr_t>(end, hi) - std::max<uintptr_t>(begin, lo);
      total += std::min<size_t>(static_cast<size_t>(kb) * 1024, overlap);
    }
  }
  return total;
}

}  // namespace smallmind::shared
