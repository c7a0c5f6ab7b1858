#include "shared/memory_bandwidth.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "shared/huge_region.h"

namespace smallmind::shared {
namespace {

// Eight independent accumulators so loads, not adds, bound the loop.
uint64_t ReadSumScalar(const uint64_t* p, size_t n) {
  uint64_t a[8] = {};
  for (size_t i = 0; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; j++) a[j] += p[i + j];
  }
  uint64_t s = 0;
  for (uint64_t v : a) s += v;
  return s;
}

// 256-bit loads into four accumulators from two streams (the halves of the range), the way the
// matmul kernels read packed weights. p must be 32-byte aligned.
__attribute__((target("avx2"))) uint64_t ReadSumAvx2(const uint64_t* p, size_t n) {
  const auto* a = reinterpret_cast<const __m256i*>(p);
  const auto* b = reinterpret_cast<const __m256i*>(p + n / 2);
  const size_t vecs = n / 2 / 4;  // 256-bit vectors per stream
  __m256i acc[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                    _mm256_setzero_si256()};
  for (size_t i = 0; i + 2 <= vecs; i += 2) {
    acc[0] = _mm256_add_epi64(acc[0], _mm256_load_si256(a + i));
    acc[1] = _mm256_add_epi64(acc[1], _mm256_load_si256(a + i + 1));
    acc[2] = _mm256_add_epi64(acc[2], _mm256_load_si256(b + i));
    acc[3] = _mm256_add_epi64(acc[3], _mm256_load_si256(b + i + 1));
  }
  const __m256i s =
      _mm256_add_epi64(_mm256_add_epi64(acc[0], acc[1]), _mm256_add_epi64(acc[2], acc[3]));
  uint64_t lanes[4];
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes), s);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

}  // namespace

uint64_t ReadSum(const uint64_t* p, size_t n) {
  const bool aligned = reinterpret_cast<uintptr_t>(p) % 32 == 0;
  return aligned && __builtin_cpu_supports("avx2") ? ReadSumAvx2(p, n) : ReadSumScalar(p, n);
}

double MeasureReadBandwidth(int threads, size_t bytes, int passes) {
  threads = std::max(1, threads);
  // Each thread's share: a multiple of 16 words, so every share stays 32-byte aligned.
  const size_t share = bytes / sizeof(uint64_t) / static_cast<size_t>(threads) / 16 * 16;
  const size_t words = share * static_cast<size_t>(threads);
  // On huge pages where the kernel allows, as the engine's packed weights (shared/huge_region.h):
  // on 4 KiB pages the prefetchers stop at every page and the probe under-reads the bound.
  const HugeRegion region(words * sizeof(uint64_t));
  auto* const words_begin = reinterpret_cast<uint64_t*>(region.data());
  std::memset(words_begin, 1, words * sizeof(uint64_t));  // fault the pages in before timing
  std::vector<uint64_t> sums(static_cast<size_t>(threads));
  double best = 0;
  for (int pass = 0; pass < passes; pass++) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int i = 0; i < threads; i++) {
      pool.emplace_back([&, i] { sums[i] = ReadSum(words_begin + share * i, share); });
    }
    for (std::thread& t : pool) t.join();
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, static_cast<double>(words * sizeof(uint64_t)) / s);
  }
  volatile uint64_t keep = sums[0];  // the reads must happen
  (void)keep;
  return best;
}

}  // namespace smallmind::shared
