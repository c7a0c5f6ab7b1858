// The Q2_K packed-row matmul over kQ8K activation rows, on the K-quant driver of kquant_x8.h
// (templated on its integer core: matmul_kquant_avx2.cc instantiates it with maddubs, the VNNI
// files with vpdpbusd; both give the same exact integers, so the same bits). Included only by
// files built with AVX2 (or more) enabled. Pure inline functions and templates; thread-safe.
//
// Packed layout, groups of 8 rows (the last zero-padded), group-major then super-block-major:
//   Q2_Kx8 (672 B, the size of its 8 source blocks): uint16 d[8], dmin[8] (row r's fp16 scales),
//     uint8 scales[16][8] with scales[s][r] = row r's scales[s] (scale | min << 4), uint8
//     qs[2][8][32] with qs[h][m][4r + i] = row r's qs[32h + 4m + i] (bits 2j, 2j + 1: element
//     128h + 32j + 4m + i).
//
// Per super-block and row lane, exact int32: isum = sum of sc_s * (q . x) over the 16 sub-blocks,
// msum = sum of m_s * (the sub-block's activation quant sum); then one float pair of steps,
// y = fma(isum, d * dx, y), y = fma(-msum, dmin * dx, y): MatmulQ2_KQ8ActRef (the super-block's
// float steps of llama.cpp's q2_K x q8_K dot).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/low_bit_blocks.h"
#include "kernels/x86/kquant_x8.h"

namespace smallmind::kernels::SMALLMIND_X86_NS {

struct Q2_Kx8 {
  uint16_t d[kRowGroup];
  uint16_t dmin[kRowGroup];
  uint8_t scales[16][kRowGroup];
  uint8_t qs[2][8][32];
};
static_assert(sizeof(Q2_Kx8) == kRowGroup * sizeof(BlockQ2_K));

// Decode streams the weights from DRAM once: the next super-block asked for ahead (as Q6_K).
template <>
constexpr int kKqPrefetchSupers<Q2_Kx8> = 1;

// One Q2_Kx8 super-block into acc[t] for T tokens.
template <class Core, int T>
inline void SuperBlock(const Q2_Kx8& blk, const XRow* x, int sb, __m256* acc) {
  const __m256i three = _mm256_set1_epi8(3), nibble = _mm256_set1_epi32(15);
  __m256i isum[T], msum[T];
  for (int t = 0; t < T; t++) isum[t] = msum[t] = _mm256_setzero_si256();
  for (int h = 0; h < 2; h++) {
    for (int j = 0; j < 4; j++) {
      const int b = 8 * sb + 4 * h + j;  // the activation block: sub-blocks 2 (4h + j) and + 1
      __m256i acc_lo[T], acc_hi[T];      // Core accumulators: 4 steps of q <= 3 x |x| <= 127
      for (int t = 0; t < T; t++) acc_lo[t] = acc_hi[t] = _mm256_setzero_si256();
#pragma GCC unroll 4
      for (int m = 0; m < 4; m++) {
        const __m256i w_lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qs[h][m]));
        const __m256i w_hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qs[h][m + 4]));
        // 16-bit shifts: the mask drops the bits that crossed from the next byte.
        const __m256i q_lo = _mm256_and_si256(_mm256_srli_epi16(w_lo, 2 * j), three);
        const __m256i q_hi = _mm256_and_si256(_mm256_srli_epi16(w_hi, 2 * j), three);
        for (int t = 0; t < T; t++) {
          acc_lo[t] = Core::Add(acc_lo[t], q_lo, Broadcast4(x[t].qs + 32 * b + 4 * m));
          acc_hi[t] = Core::Add(acc_hi[t], q_hi, Broadcast4(x[t].qs + 32 * b + 16 + 4 * m));
        }
      }
      const int s = 2 * (4 * h + j);
      const __m256i raw0 = Bytes(blk.scales[s]), raw1 = Bytes(blk.scales[s + 1]);
      const __m256i f0 = Core::Factor(_mm256_and_si256(raw0, nibble));
      const __m256i f1 = Core::Factor(_mm256_and_si256(raw1, nibble));
      const __m256i m0 = _mm256_srli_epi32(raw0, 4), m1 = _mm256_srli_epi32(raw1, 4);
      for (int t = 0; t < T; t++) {
        const __m256i scaled =
            _mm256_add_epi32(Core::Scale(acc_lo[t], f0), Core::Scale(acc_hi[t], f1));
        isum[t] = _mm256_add_epi32(isum[t], scaled);
        // The sub-blocks' activation quant sums, from the kQ8K row (q8_act.h), exact.
        const int lo = x[t].sum16[2 * b], hi = x[t].sum16[2 * b + 1];
        const __m256i mins = _mm256_add_epi32(_mm256_mullo_epi32(m0, _mm256_set1_epi32(lo)),
                                              _mm256_mullo_epi32(m1, _mm256_set1_epi32(hi)));
        msum[t] = _mm256_add_epi32(msum[t], mins);
      }
    }
  }
  const __m256 d = LoadHalves(blk.d), dmin = LoadHalves(blk.dmin);
  for (int t = 0; t < T; t++) {
    const __m256 dx = _mm256_set1_ps(x[t].d[8 * sb]);  // kQ8K: one scale per super-block
    acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[t]), _mm256_mul_ps(d, dx), acc[t]);
    acc[t] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(msum[t]), _mm256_mul_ps(dmin, dx), acc[t]);
  }
}

}  // namespace smallmind::kernels::SMALLMIND_X86_NS
