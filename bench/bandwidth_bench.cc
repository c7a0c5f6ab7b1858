// Memory bandwidth probe: how fast 1, 2, ... threads stream-read a buffer much larger than the
// caches (the bound decode runs against: every weight byte read once per token), with
// shared::ReadSum (256-bit loads, two streams per thread, on AVX2 CPUs). bytes_per_second is the
// aggregate read bandwidth; compare decode tok/s x weight bytes against it. `smallmind bench
// --offline` runs the same probe and prints decode as a percentage of it.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "shared/huge_region.h"
#include "shared/memory_bandwidth.h"

namespace {

constexpr size_t kBufferBytes = size_t{1} << 30;  // 1 GiB: ~30x the L3 of current server parts

// The probe's buffer, allocated and touched once (so page faults are not measured), on huge pages
// where the kernel allows, as the engine's packed weights.
const uint64_t* Buffer() {
  static const smallmind::shared::HugeRegion region = [] {
    smallmind::shared::HugeRegion r(kBufferBytes);
    std::memset(r.data(), 1, kBufferBytes);
    return r;
  }();
  return reinterpret_cast<const uint64_t*>(region.data());
}

// state.range(0) threads each read their own contiguous share of the buffer per iteration (thread
// start-up, ~0.1 ms, is noise against the ~70 ms of a pass). bytes_per_second is the aggregate.
void BM_ReadBandwidth(benchmark::State& state) {
  const uint64_t* buffer = Buffer();
  const int n_threads = static_cast<int>(state.range(0));
  const size_t share = kBufferBytes / sizeof(uint64_t) / static_cast<size_t>(n_threads) / 16 * 16;
  std::vector<uint64_t> sums(static_cast<size_t>(n_threads));
  for (auto _ : state) {
    std::vector<std::thread> threads;
    for (int i = 0; i < n_threads; i++) {
      threads.emplace_back(
          [&, i] { sums[i] = smallmind::shared::ReadSum(buffer + share * i, share); });
    }
    for (std::thread& t : threads) t.join();
    benchmark::DoNotOptimize(sums.data());
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * share * n_threads * sizeof(uint64_t)));
}

}  // namespace

BENCHMARK(BM_ReadBandwidth)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Arg(4)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
