// The engine's ThreadPool (worker/engine/thread_pool.h): the time of one ParallelFor of 64 items on
// 2 pinned threads, against half its work run serially on one, for the two partitions and three
// part sizes: no work (the pool's own cost), and 8 or 32 pause instructions an item (an op of
// about 10 or 40 us of one thread's work, as a decode step's matmuls and attention are). A decode
// step runs ~60 parallel-path ops (each matmul and each layer's attention), so a microsecond here
// is ~60 us a step.
//
//   thread_pool_bench [benchmark flags]
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <atomic>
#include <vector>

#include "shared/cpu_topology.h"
#include "worker/engine/thread_pool.h"

namespace smallmind::worker {
namespace {

void Spin(int iterations) {
  for (int i = 0; i < iterations; i++) _mm_pause();
}

// The CPUs this process may use, read once: a pool pins its caller (this thread) to the first.
const std::vector<int>& Cpus() {
  static const std::vector<int> cpus = shared::AllowedCpus();
  return cpus;
}

void BM_ParallelFor(benchmark::State& state, Partition partition, int pauses_per_item) {
  const std::vector<int>& cpus = Cpus();
  if (cpus.size() < 2) return state.SkipWithError("needs 2 CPUs");
  ThreadPool pool(2, {cpus[0], cpus[1]});
  std::atomic<int> parts{0};
  for (auto _ : state) {
    pool.ParallelFor(64, 2, partition, [&](kernels::RowRange r, int) {
      Spin(pauses_per_item * r.size());
      parts.fetch_add(1, std::memory_order_relaxed);
    });
  }
  state.counters["parts_per_op"] = static_cast<double>(parts.load()) / state.iterations();
}

void BM_Serial(benchmark::State& state, int pauses_per_item) {
  for (auto _ : state) Spin(pauses_per_item * 64 / 2);  // one thread's half of the op
}

void Register() {
  Cpus();
  for (int pauses : {0, 8, 32}) {
    const std::string work = "/pauses_per_item:" + std::to_string(pauses);
    benchmark::RegisterBenchmark(("BM_ParallelFor/static" + work).c_str(), BM_ParallelFor,
                                 Partition::kStaticRows, pauses);
    benchmark::RegisterBenchmark(("BM_ParallelFor/dynamic" + work).c_str(), BM_ParallelFor,
                                 Partition::kDynamic, pauses);
    if (pauses > 0) {
      benchmark::RegisterBenchmark(("BM_Serial/half_the_op" + work).c_str(), BM_Serial, pauses);
    }
  }
}

}  // namespace
}  // namespace smallmind::worker

int main(int argc, char** argv) {
  smallmind::worker::Register();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
