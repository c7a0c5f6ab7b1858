// Memory read-bandwidth probe: the bound a decode step runs against (every weight byte is read once
// per token), so benchmarks can state decode as a percentage of what this machine reads. Not
// thread-safe; allocates and touches the buffer it reads (1 GiB by default).
#pragma once

#include <cstddef>
#include <cstdint>

namespace smallmind::shared {

// Sums n words starting at p (n a multiple of 16), reading with the widest loads the CPU has
// (256-bit loads, two streams, when it has AVX2). The result only keeps the reads alive.
uint64_t ReadSum(const uint64_t* p, size_t n);

// Aggregate bytes per second at which `threads` threads read their own contiguous shares of a
// `bytes` buffer much larger than the caches; the best of `passes` passes.
double MeasureReadBandwidth(int threads, size_t bytes = size_t{1} << 30, int passes = 3);

}  // namespace smallmind::shared
