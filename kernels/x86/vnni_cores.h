// The VNNI integer cores of the packed-row matmuls, on 256-bit registers, for the files built
// with a VNNI flavour (kernels/avx512/: AVX-512 VNNI, EVEX; kernels/avx_vnni/: AVX-VNNI, VEX). Dp
// is that flavour's vpdpbusd: acc + the 4 products of unsigned bytes u and signed bytes s summed
// into each int32 lane. The products are exact and int32 never overflows here, so each core
// computes the AVX2 core's integers (matmul_q8_avx2.cc, matmul_kquant_avx2.cc) and the
// kernels built on them give the AVX2 kernels' bits. Pure inline templates; thread-safe.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/x86/q8_0x8.h"
#include "kernels/x86/q8_rows.h"
#include "kernels/x86/x86_util.h"

namespace smallmind::kernels::SMALLMIND_X86_NS {

using DpBusdFn = __m256i (*)(__m256i acc, __m256i u, __m256i s);

// Q8_0 / Q4_0 (q8_0x8.h's Dots): block b of G packed groups against T tokens (XA: RowsX or
// OctetX, q8_rows.h),
// isum[g][t] lane r = the exact dot product of group g's row r's 32 quants (Q4_0: the raw
// nibbles, the unsigned side as they are; Q8_0: see below) with token t's.
template <DpBusdFn Dp>
struct VnniDots {
  template <int G, int T, class XA>
  static void Run(const Q4_0x8* const* grp, const XA& x, int b, __m256i (*isum)[T]) {
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    for (int g = 0; g < G; g++) {
      for (int t = 0; t < T; t++) isum[g][t] = _mm256_setzero_si256();
    }
#pragma GCC unroll 4
    for (int m = 0; m < 4; m++) {
      for (int g = 0; g < G; g++) {
        const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(grp[g][b].qs[m]));
        const __m256i lo = _mm256_and_si256(w, low4);
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(w, 4), low4);
        for (int t = 0; t < T; t++) {
          isum[g][t] = Dp(isum[g][t], lo, Broadcast4(x.Quad(b, m, t)));
          isum[g][t] = Dp(isum[g][t], hi, Broadcast4(x.Quad(b, m + 4, t)));
        }
      }
      Fence<G, T>(isum);
    }
  }

  // Q8_0: each quant stored as q + 128 (Q8_0x8u) on the unsigned side, the activations as they
  // are on the signed one, so one vpdpbusd does 32 multiply-adds with nothing per token; the sum
  // then holds 128 * (the activation block's quant sum) too, which the accumulator starts without.
  template <int G, int T, class XA>
  static void Run(const Q8_0x8u* const* grp, const XA& x, int b, __m256i (*isum)[T]) {
    for (int t = 0; t < T; t++) {
      const __m256i start = _mm256_set1_epi32(x.Start(b, t));
      for (int g = 0; g < G; g++) isum[g][t] = start;
    }
#pragma GCC unroll 8
    for (int m = 0; m < 8; m++) {
      __m256i w[G];
      for (int g = 0; g < G; g++) {
        w[g] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(grp[g][b].qs[m]));
      }
      for (int t = 0; t < T; t++) {  // each broadcast serves the G groups
        const __m256i xb = Broadcast4(x.Quad(b, m, t));
        for (int g = 0; g < G; g++) isum[g][t] = Dp(isum[g][t], w[g], xb);
      }
      Fence<G, T>(isum);
    }
  }
};

// Q4_K / Q6_K (kquant_x8.h's Core): int32 accumulators from the start, scaled by the
// sub-block scale with one vpmulld.
template <DpBusdFn Dp>
struct VnniCore {
  // Add takes any unsigned bytes: the products are summed straight into int32.
  static constexpr bool kAnyUnsigned = true;
  static __m256i Add(__m256i acc, __m256i u, __m256i s) { return Dp(acc, u, s); }
  static __m256i Factor(__m256i sc) { return sc; }
  static __m256i Scale(__m256i acc, __m256i factor) { return _mm256_mullo_epi32(acc, factor); }
  static __m256i AddWide(__m256i acc, __m256i u, __m256i s) { return Dp(acc, u, s); }
};

}  // namespace smallmind::kernels::SMALLMIND_X86_NS
