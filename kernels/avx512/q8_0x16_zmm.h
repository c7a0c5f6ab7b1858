// The Q8_0 matmul over Q8 activations on 16-lane registers, less the registers: Q8_0 packed 16
// rows a group (Q8_0x16u, q8_0x8_avx2.h: each quant stored as q + 128, the layout the AMX kernel
// reads), so one 64-byte row of a block holds 4 consecutive quants of each of 16 rows and one
// vpdpbusd against 4 activation quants broadcast to every lane advances all 16 rows: 64
// multiply-adds an instruction, twice the 256-bit VNNI core's. V is the 16-lane ops: AVX-512
// (matmul_q8_0x16_avx512.cc) or a stand-in of two 256-bit halves (tests/kernels/zmm_emulated.cc),
// so the logic here is checked on every machine and the instructions where the CPU has them.
//
// Each lane ends a block holding its row's exact integer block dot product less 128 x the token's
// block quant sum (the sum starts there, as the 256-bit VNNI core's does), and the float steps
// after it are the 256-bit kernels' (AccumulateQ8: scale = dw * dx, acc = fma(float(isum), scale,
// acc), blocks in order), lane for lane: the same bits as the AVX2, AVX-VNNI and AMX kernels, for
// every tile and batch, on both paths.
//
// Tiles as the 8-row kernels' with groups twice as tall: 1 group x 8 tokens (8 int32 sums and 8
// float accumulators of AVX-512's 32 registers), 2 x 4 for 4-7 tokens left, 2 x 2-3 for the last
// 2-3, kQ8x16TailGroups groups x 1 token for single-stream decode; the driver is the 8-row
// kernels' (q8_rows_avx2.h MatmulRowGroups) on 16-row groups, as the engine's row split already
// is (worker/engine/op_runner.cc kMatmulRowGroup). Measured on Zen 5 (session 20, kernels_bench,
// one core, min of 3 interleaved runs): 1 x 8 beat 2 x 4 and 1 x 12 at 8 and 16 tokens (w1 8
// tokens 64 vs 86 and 88 us).
//
// Included only by files built with AVX2 (or more) enabled; pure inline templates; thread-safe.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/avx2/avx2_util.h"
#include "kernels/avx2/q8_0x8_avx2.h"
#include "kernels/avx2/q8_rows_avx2.h"
#include "kernels/partition.h"

namespace smallmind::kernels::SMALLMIND_X86_NS {

// V provides (I: 16 int32 lanes, F: 16 float lanes, each 64 bytes, lane i at bytes 4i):
//   static I Load(const uint8_t* p);              64 bytes
//   static I Set1(int32_t v);  static F Set1(float v);
//   static I DpBusd(I acc, I u, I s);             vpdpbusd: unsigned u x signed s
//   static F Halves(const uint16_t* h);           16 fp16 values as floats
//   static F Float(I v);  static F Mul(F a, F b);  static F Fma(F a, F b, F c);  a * b + c, fused
//   static void Fence(I& v);                      the compiler may not move work across it
template <class V>
struct Q8_0x16Kernel {
  using Packed = Q8_0x16u;
  using Acc = typename V::F;
  static constexpr int kBlockElems = 32;

  template <int G, int T>
  static void Tile(const Packed* const* grp, int n_blocks, const XRow* x, Acc (*acc)[T]) {
    for (int b = 0; b < n_blocks; b++) {
      if (T > 1) {  // block b of the next G groups (see Q8Kernel::Tile)
        for (int i = 0; i < G; i++) Prefetch(grp[i] + G * n_blocks + b, sizeof(Packed));
      }
      typename V::I isum[G][T];
      for (int t = 0; t < T; t++) {
        const typename V::I start = V::Set1(-128 * x[t].qsum[b]);
        for (int g = 0; g < G; g++) isum[g][t] = start;
      }
#pragma GCC unroll 8
      for (int m = 0; m < 8; m++) {
        typename V::I w[G];
        for (int g = 0; g < G; g++) w[g] = V::Load(grp[g][b].qs[m]);
        for (int t = 0; t < T; t++) {  // each broadcast serves the G groups
          int32_t quads;
          std::memcpy(&quads, x[t].qs + 32 * b + 4 * m, 4);
          const typename V::I xb = V::Set1(quads);
          for (int g = 0; g < G; g++) isum[g][t] = V::DpBusd(isum[g][t], w[g], xb);
        }
        for (int g = 0; g < G; g++) {
          for (int t = 0; t < T; t++) V::Fence(isum[g][t]);
        }
      }
      for (int g = 0; g < G; g++) {
        const typename V::F dw = V::Halves(grp[g][b].d);
        for (int t = 0; t < T; t++) {
          const typename V::F scale = V::Mul(dw, V::Set1(x[t].d[b]));
          acc[g][t] = V::Fma(V::Float(isum[g][t]), scale, acc[g][t]);
        }
      }
    }
  }
};

// Single-stream decode: this many 16-row weight streams in flight (Zen 5: 4 and 1 alike, 2
// slower).
constexpr int kQ8x16TailGroups = 4;

// y[t, r] = x[t] . w[r] for r in `rows`, w packed as Q8_0x16u, 16-lane ops V.
template <class V>
void MatmulQ8_0x16(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows) {
  MatmulRowGroups<Q8_0x16Kernel<V>, 1, kQ8TileTokens, kQ8x16TailGroups, 2, kQ8MidTokens,
                  kQ8RaggedGroups>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

}  // namespace smallmind::kernels::SMALLMIND_X86_NS
