// What AMX tile instructions cost on this CPU, for the shapes kernels/amx/amx_q8_0.h issues: the
// nanoseconds per TDPBSUD of 16 x 8 x 32 and 16 x 16 x 32 (and 16 x 16 x 64, the full tile), one
// dependent chain of them, tile loads and stores, and the kernel's per-block sequence
// (load A and B, zero C, product, store C, two blocks on two sets of tiles). Google Benchmark, one
// thread; pin it (`taskset -c 2`). Skips every case where CpuSupports(Isa::kAmx) is false.
//
//   build/bin/amx_tile_bench --benchmark_min_time=0.2s
//
// Built with -mamx-tile -mamx-int8 (bench/CMakeLists.txt); runs no tile instruction unless the
// CPU and OS allow them.
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/dispatch.h"

namespace {

using smallmind::kernels::CpuSupports;
using smallmind::kernels::Isa;

struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// Tiles 0-1: A (a_rows x a_colsb), 2-3: B (b_rows x b_colsb), 4-7: C (a_rows x b_colsb).
void Configure(int a_rows, int a_colsb, int b_rows, int b_colsb) {
  TileConfig cfg;
  for (int t = 0; t < 8; t++) {
    const bool a = t < 2, b = t >= 2 && t < 4;
    cfg.rows[t] = static_cast<uint8_t>(a ? a_rows : b ? b_rows : a_rows);
    cfg.colsb[t] = static_cast<uint16_t>(a ? a_colsb : b_colsb);
  }
  asm volatile("" : : "r"(&cfg) : "memory");  // GCC 12 may drop the stores LDTILECFG reads
  _tile_loadconfig(&cfg);
}

// Operand memory: A rows a Q8 activation row of bench-110M apart (768 + 288 bytes), B and C packed.
constexpr size_t kARowBytes = 1056;
struct Buffers {
  std::vector<uint8_t> a = std::vector<uint8_t>(16 * kARowBytes + 64, 1);
  alignas(64) uint8_t b[4][1024] = {};
  alignas(64) int32_t c[4][16][16] = {};
};

bool Skip(benchmark::State& state) {
  if (CpuSupports(Isa::kAmx)) return false;
  state.SkipWithError("this CPU (or OS) does not run AMX");
  return true;
}

// Four independent products per iteration: their throughput.
void BM_Product(benchmark::State& state) {
  if (Skip(state)) return;
  const int n = static_cast<int>(state.range(0)), k = static_cast<int>(state.range(1));
  Configure(16, k, k / 4, 4 * n);
  Buffers buf;
  _tile_loadd(0, buf.a.data(), kARowBytes);
  _tile_loadd(2, buf.b[0], 4 * n);
  for (auto _ : state) {
    _tile_dpbsud(4, 0, 2);
    _tile_dpbsud(5, 0, 2);
    _tile_dpbsud(6, 0, 2);
    _tile_dpbsud(7, 0, 2);
  }
  _tile_stored(4, buf.c, 64);
  _tile_release();
  state.SetItemsProcessed(4 * state.iterations());
  state.SetLabel("16 x " + std::to_string(n) + " x " + std::to_string(k));
}
BENCHMARK(BM_Product)->Args({8, 32})->Args({16, 32})->Args({16, 64});

// One product after another into the same C: the latency.
void BM_ProductChain(benchmark::State& state) {
  if (Skip(state)) return;
  Configure(16, 32, 8, 32);
  Buffers buf;
  _tile_loadd(0, buf.a.data(), kARowBytes);
  _tile_loadd(2, buf.b[0], 32);
  for (auto _ : state) _tile_dpbsud(4, 0, 2);
  _tile_stored(4, buf.c, 64);
  _tile_release();
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ProductChain);

// Two loads of A (16 rows x 32 bytes, strided), of B (8 x 64) or two stores of C (16 x 64).
void BM_LoadStore(benchmark::State& state) {
  if (Skip(state)) return;
  Configure(16, 32, 8, 64);
  Buffers buf;
  const int which = static_cast<int>(state.range(0));
  for (auto _ : state) {
    if (which == 0) {
      _tile_loadd(0, buf.a.data(), kARowBytes);
      _tile_loadd(1, buf.a.data() + 32, kARowBytes);
    } else if (which == 1) {
      _tile_loadd(2, buf.b[0], 64);
      _tile_loadd(3, buf.b[1], 64);
    } else {
      _tile_stored(4, buf.c[0], 64);
      _tile_stored(5, buf.c[1], 64);
    }
    benchmark::ClobberMemory();
  }
  _tile_release();
  state.SetItemsProcessed(2 * state.iterations());
  state.SetLabel(which == 0 ? "load A 16 x 32" : which == 1 ? "load B 8 x 64" : "store C 16 x 64");
}
BENCHMARK(BM_LoadStore)->Arg(0)->Arg(1)->Arg(2);

// amx_q8_0.h's Dots for two blocks: load A and B, zero C, product, store C, on tiles (0, 2, 4)
// and (1, 3, 5). Items: blocks.
void BM_KernelBlocks(benchmark::State& state) {
  if (Skip(state)) return;
  Configure(16, 32, 8, 64);
  Buffers buf;
  for (auto _ : state) {
    _tile_loadd(0, buf.a.data(), kARowBytes);
    _tile_loadd(2, buf.b[0], 64);
    _tile_loadd(1, buf.a.data() + 32, kARowBytes);
    _tile_loadd(3, buf.b[1], 64);
    _tile_zero(4);
    _tile_zero(5);
    _tile_dpbsud(4, 0, 2);
    _tile_dpbsud(5, 1, 3);
    _tile_stored(4, buf.c[0], 64);
    _tile_stored(5, buf.c[1], 64);
    benchmark::ClobberMemory();
  }
  _tile_release();
  state.SetItemsProcessed(2 * state.iterations());
}
BENCHMARK(BM_KernelBlocks);

}  // namespace

BENCHMARK_MAIN();
