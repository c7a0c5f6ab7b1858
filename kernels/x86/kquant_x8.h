// The Q4_K / Q5_K / Q6_K / IQ4_XS packed-row matmuls over Q8 activations, templated on their
// integer core: the packed layouts, sub-block walks, float steps and tile shapes.
// matmul_kquant_avx2.cc instantiates them with the maddubs core, kernels/avx512/matmul_avx512.cc
// and kernels/avx_vnni/matmul_avx_vnni.cc with the VNNI one (vnni_cores.h); all give the same exact
// scaled integers, so all give the same bits. Included only by files built with AVX2 (or more)
// enabled. Pure inline functions and templates; thread-safe.
//
// A Core provides, for int32 lanes each summing 4 products of unsigned bytes u and signed bytes s:
//   static __m256i Add(__m256i acc, __m256i u, __m256i s);  acc plus the products of u and s, in
//       the core's accumulator form (maddubs: int16 pairs, which hold the 8 steps these kernels
//       take between widenings; vpdpbusd: int32)
//   static __m256i Factor(__m256i sc);  int32 scales (|sc| < 2^15) in the form Scale takes,
//       made once per sub-block and used for every token
//   static __m256i Scale(__m256i acc, __m256i factor);  int32 lanes: sc * (the lane's sum), exact
//   static __m256i AddWide(__m256i acc, __m256i u, __m256i s);  int32 lanes acc plus the products
//       of u and s, for products too large for int16 sums (IQ4_XS: |level| <= 127)
//
// Packed layouts, groups of 8 rows (the last group zero-padded), group-major then
// super-block-major, each the size of its 8 source blocks (so packing costs no memory):
//   Q4_Kx8 (1152 B): uint16 d[8], dmin[8] (row r's fp16 scales), uint8 scales[8][8] with
//     scales[j][r] = sc_j | (m_j >> 4) << 6, uint8 mins[4][8] with mins[p][r] = (m_2p & 15) |
//     (m_2p+1 & 15) << 4, uint8 qs[4][8][32] with qs[p][m][4r + i] = row r's qs[32p + 4m + i]
//     (low nibbles: sub-block 2p, element 4m + i; high nibbles: sub-block 2p + 1).
//   Q5_Kx8 (1408 B): Q4_Kx8's d, dmin, scales and mins, then uint8 qh[8][32] with qh[m][4r + i] =
//     row r's qh[4m + i] (bit j: the fifth bit of that element of sub-block j), then Q4_Kx8's qs.
//   IQ4_XSx8 (1104 B, 16 over the source): uint16 d[8], int8 scales[8][8] with scales[s][r] =
//     row r's ls_s - 32, uint8 qs[8][4][32] with qs[s][m][4r + i] = row r's qs[16s + 4m + i] (low
//     nibbles: elements 4m + i of sub-block s, high nibbles: 16 + 4m + i).
//   Q6_Kx8 (1680 B): uint16 d[8], int8 scales[16][8] (scales[s][r] = row r's scales[s]), uint8
//     ql[2][16][32] with ql[h][m][4r + i] = row r's ql[64h + 4m + i], uint8 qh[2][8][32] with
//     qh[h][m][4r + i] = row r's qh[32h + 4m + i] (bit layout of the half as in dequant_ref.cc).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/partition.h"
#include "kernels/quant_blocks.h"
#include "kernels/x86/q8_0x8.h"
#include "kernels/x86/q8_rows.h"
#include "kernels/x86/x86_util.h"

namespace smallmind::kernels::SMALLMIND_X86_NS {

struct Q4_Kx8 {
  uint16_t d[kRowGroup];
  uint16_t dmin[kRowGroup];
  uint8_t scales[8][kRowGroup];
  uint8_t mins[4][kRowGroup];
  uint8_t qs[4][8][32];
};
struct Q5_Kx8 {
  uint16_t d[kRowGroup];
  uint16_t dmin[kRowGroup];
  uint8_t scales[8][kRowGroup];
  uint8_t mins[4][kRowGroup];
  uint8_t qh[8][32];
  uint8_t qs[4][8][32];
};
struct IQ4_XSx8 {
  uint16_t d[kRowGroup];
  int8_t scales[8][kRowGroup];
  uint8_t qs[8][4][32];
};
struct Q6_Kx8 {
  uint16_t d[kRowGroup];
  int8_t scales[16][kRowGroup];
  uint8_t ql[2][16][32];
  uint8_t qh[2][8][32];
};
static_assert(sizeof(Q4_Kx8) == kRowGroup * sizeof(BlockQ4_K));
static_assert(sizeof(Q5_Kx8) == kRowGroup * sizeof(BlockQ5_K));
static_assert(sizeof(Q6_Kx8) == kRowGroup * sizeof(BlockQ6_K));
static_assert(sizeof(IQ4_XSx8) == kRowGroup * sizeof(BlockIQ4_XS) + 16);

// 8 bytes widened to int32 lanes: unsigned / signed.
inline __m256i Bytes(const uint8_t* p) {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}
inline __m256i Bytes(const int8_t* p) {
  return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}

// ---- Q4_K ----

// Sub-blocks 2p and 2p + 1 of a Q4_Kx8 (or Q5_Kx8): their scales as Core factors and dmin * m
// (exact).
template <class Core, class Packed>
inline void Q4_KScales(const Packed& blk, int p, __m256 dmin, __m256i* sc, __m256* mins) {
  const __m256i a0 = Bytes(blk.scales[2 * p]), a1 = Bytes(blk.scales[2 * p + 1]);
  const __m256i lo = Bytes(blk.mins[p]);
  const __m256i six = _mm256_set1_epi32(63), four = _mm256_set1_epi32(15);
  sc[0] = Core::Factor(_mm256_and_si256(a0, six));
  sc[1] = Core::Factor(_mm256_and_si256(a1, six));
  const __m256i m0 =
      _mm256_or_si256(_mm256_slli_epi32(_mm256_srli_epi32(a0, 6), 4), _mm256_and_si256(lo, four));
  const __m256i m1 =
      _mm256_or_si256(_mm256_slli_epi32(_mm256_srli_epi32(a1, 6), 4), _mm256_srli_epi32(lo, 4));
  mins[0] = _mm256_mul_ps(dmin, _mm256_cvtepi32_ps(m0));
  mins[1] = _mm256_mul_ps(dmin, _mm256_cvtepi32_ps(m1));
}

// One Q4_Kx8 super-block (activation blocks 8 sb .. 8 sb + 7) into acc[t] for T tokens.
template <class Core, int T>
inline void SuperBlock(const Q4_Kx8& blk, const XRow* x, int sb, __m256* acc) {
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  const __m256 d = LoadHalves(blk.d), dmin = LoadHalves(blk.dmin);
  for (int p = 0; p < 4; p++) {
    __m256i sc[2];
    __m256 mins[2];
    Q4_KScales<Core>(blk, p, dmin, sc, mins);
    for (int half = 0; half < 2; half++) {  // low nibbles: sub-block 2p, high: 2p + 1
      const int b = 8 * sb + 2 * p + half;
      __m256i acc16[T];  // Core accumulators; 8 steps of nibbles (<= 15) x quants (|q| <= 127)
      for (int t = 0; t < T; t++) acc16[t] = _mm256_setzero_si256();
#pragma GCC unroll 1
      for (int m = 0; m < 8; m++) {
        __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qs[p][m]));
        if (half == 1) q = _mm256_srli_epi16(q, 4);
        q = _mm256_and_si256(q, low4);
        for (int t = 0; t < T; t++) {
          const __m256i xb = Broadcast4(x[t].qs + 32 * b + 4 * m);
          acc16[t] = Core::Add(acc16[t], q, xb);
        }
      }
      for (int t = 0; t < T; t++) {
        const __m256i isum = Core::Scale(acc16[t], sc[half]);  // sc * isum, exact
        const __m256 scale = _mm256_mul_ps(d, _mm256_set1_ps(x[t].d[b]));
        acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), scale, acc[t]);
        acc[t] = _mm256_fnmadd_ps(mins[half], _mm256_set1_ps(x[t].s[b]), acc[t]);
      }
    }
  }
}

// Sub-block 2p + half of a Q4_Kx8: its scales as Core factors and dmin * m (the lanes of
// Q4_KScales' sc[half] / mins[half], bitwise).
template <class Core>
inline void Q4_KScale(const Q4_Kx8& blk, int p, int half, __m256i* sc, __m256* min) {
  const __m256i a = Bytes(blk.scales[2 * p + half]), lo = Bytes(blk.mins[p]);
  const __m256i m_lo =
      half == 0 ? _mm256_and_si256(lo, _mm256_set1_epi32(15)) : _mm256_srli_epi32(lo, 4);
  *sc = Core::Factor(_mm256_and_si256(a, _mm256_set1_epi32(63)));
  const __m256i m = _mm256_or_si256(_mm256_slli_epi32(_mm256_srli_epi32(a, 6), 4), m_lo);
  *min = _mm256_mul_ps(LoadHalves(blk.dmin), _mm256_cvtepi32_ps(m));
}

// Prefill: sub-block 2p + kHalf (kHalf 0: low nibbles of qs[p], 1: high) of super-block sb of G
// groups x T tokens, each activation broadcast shared by the G groups; per lane the float steps
// of SuperBlock<1>.
template <class Core, int G, int T, int kHalf>
inline void SubBlockGroups(const Q4_Kx8* const* grp, const XRow* x, int sb, int p,
                           __m256 (*acc)[T]) {
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  const int b = 8 * sb + 2 * p + kHalf;
  __m256i acc16[G][T];  // int16 pairs as in SuperBlock
  for (int g = 0; g < G; g++) {
    for (int t = 0; t < T; t++) acc16[g][t] = _mm256_setzero_si256();
  }
#pragma GCC unroll 8
  for (int m = 0; m < 8; m++) {
    __m256i q[G];
    for (int g = 0; g < G; g++) {
      q[g] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(grp[g][sb].qs[p][m]));
      if (kHalf == 1) q[g] = _mm256_srli_epi16(q[g], 4);
      q[g] = _mm256_and_si256(q[g], low4);
    }
    for (int t = 0; t < T; t++) {
      const __m256i xb = Broadcast4(x[t].qs + 32 * b + 4 * m);
      for (int g = 0; g < G; g++) {
        acc16[g][t] = Core::Add(acc16[g][t], q[g], xb);
      }
    }
    Fence<G, T>(acc16);
  }
  for (int g = 0; g < G; g++) {
    __m256i sc;
    __m256 min;
    Q4_KScale<Core>(grp[g][sb], p, kHalf, &sc, &min);
    const __m256 d = LoadHalves(grp[g][sb].d);
    for (int t = 0; t < T; t++) {
      const __m256i isum = Core::Scale(acc16[g][t], sc);  // sc * isum, exact
      const __m256 scale = _mm256_mul_ps(d, _mm256_set1_ps(x[t].d[b]));
      acc[g][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), scale, acc[g][t]);
      acc[g][t] = _mm256_fnmadd_ps(min, _mm256_set1_ps(x[t].s[b]), acc[g][t]);
    }
  }
}

// Decode: sub-blocks 2p (low nibbles of qs[p]) and 2p + 1 (high nibbles) of super-block sb of G
// groups against one token, each activation broadcast shared by the G groups; per lane the float
// steps of SuperBlock<1>, in block order.
template <class Core, int G>
inline void SubBlockPairOneToken(const Q4_Kx8* const* grp, const XRow& x, int sb, int p,
                                 __m256 (*acc)[1]) {
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  const int b = 8 * sb + 2 * p;  // the low nibbles' activation block; b + 1 the high nibbles'
  __m256i acc16[G][2];           // [group][low / high], int16 pairs as in SuperBlock
  for (int g = 0; g < G; g++) acc16[g][0] = acc16[g][1] = _mm256_setzero_si256();
#pragma GCC unroll 8
  for (int m = 0; m < 8; m++) {
    const __m256i x0 = Broadcast4(x.qs + 32 * b + 4 * m);
    const __m256i x1 = Broadcast4(x.qs + 32 * (b + 1) + 4 * m);
    for (int g = 0; g < G; g++) {
      const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(grp[g][sb].qs[p][m]));
      const __m256i lo = _mm256_and_si256(q, low4);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
      acc16[g][0] = Core::Add(acc16[g][0], lo, x0);
      acc16[g][1] = Core::Add(acc16[g][1], hi, x1);
    }
    Fence<G, 2>(acc16);
  }
  for (int g = 0; g < G; g++) {
    const Q4_Kx8& blk = grp[g][sb];
    __m256i sc[2];
    __m256 mins[2];
    Q4_KScales<Core>(blk, p, LoadHalves(blk.dmin), sc, mins);
    const __m256 d = LoadHalves(blk.d);
    for (int half = 0; half < 2; half++) {
      const __m256i isum = Core::Scale(acc16[g][half], sc[half]);  // sc * isum, exact
      const __m256 scale = _mm256_mul_ps(d, _mm256_set1_ps(x.d[b + half]));
      acc[g][0] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), scale, acc[g][0]);
      acc[g][0] = _mm256_fnmadd_ps(mins[half], _mm256_set1_ps(x.s[b + half]), acc[g][0]);
    }
    asm("" : "+x"(acc[g][0]));  // one group's scales at a time: fewer live registers
  }
}

// ---- Q5_K ----

// The 5-bit quants of elements 4m .. 4m + 3 of sub-block 2p + half for the 8 rows: Q4_K's nibbles
// with bit 2p + half of the qh bytes as bit 4.
inline __m256i Q5Quants(const Q5_Kx8& blk, int p, int half, int m) {
  __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qs[p][m]));
  if (half == 1) q = _mm256_srli_epi16(q, 4);
  q = _mm256_and_si256(q, _mm256_set1_epi8(0x0f));
  const __m256i bit = _mm256_set1_epi8(static_cast<char>(1 << (2 * p + half)));
  const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qh[m]));
  const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(qh, bit), bit);
  return _mm256_or_si256(q, _mm256_and_si256(set, _mm256_set1_epi8(0x10)));
}

// One Q5_Kx8 super-block into acc[t] for T tokens: Q4_K's float steps; each sub-block's integers
// in two runs of 4 steps (a maddubs int16 lane holds 4 * 2 * 31 * 127 = 31496, not 8 steps), each
// scaled exactly, then added in int32.
template <class Core, int T>
inline void SuperBlock(const Q5_Kx8& blk, const XRow* x, int sb, __m256* acc) {
  const __m256 d = LoadHalves(blk.d), dmin = LoadHalves(blk.dmin);
  for (int p = 0; p < 4; p++) {
    __m256i sc[2];
    __m256 mins[2];
    Q4_KScales<Core>(blk, p, dmin, sc, mins);
    for (int half = 0; half < 2; half++) {
      const int b = 8 * sb + 2 * p + half;
      __m256i isum[T];
      for (int t = 0; t < T; t++) isum[t] = _mm256_setzero_si256();
      for (int run = 0; run < 2; run++) {
        __m256i acc16[T];
        for (int t = 0; t < T; t++) acc16[t] = _mm256_setzero_si256();
#pragma GCC unroll 4
        for (int m = 4 * run; m < 4 * run + 4; m++) {
          const __m256i q = Q5Quants(blk, p, half, m);
          for (int t = 0; t < T; t++) {
            acc16[t] = Core::Add(acc16[t], q, Broadcast4(x[t].qs + 32 * b + 4 * m));
          }
        }
        for (int t = 0; t < T; t++) {
          isum[t] = _mm256_add_epi32(isum[t], Core::Scale(acc16[t], sc[half]));
        }
      }
      for (int t = 0; t < T; t++) {
        const __m256 scale = _mm256_mul_ps(d, _mm256_set1_ps(x[t].d[b]));
        acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[t]), scale, acc[t]);
        acc[t] = _mm256_fnmadd_ps(mins[half], _mm256_set1_ps(x[t].s[b]), acc[t]);
      }
    }
  }
}

// ---- IQ4_XS ----

// Block s of an IQ4_XSx8 super-block (activation block b) on a core whose Add takes any
// unsigned bytes (VNNI): the levels + 128 (1 .. 241, one vpshufb of a shifted table) against
// the activations, then 128 * (the block's activation quant sum, from the kQ8K row's sums per 16)
// taken off: the exact isum of the sign / abs form with 4 fewer vector ops a step and token.
template <class Core, int T>
inline void IQ4_XSBlockUnsigned(const IQ4_XSx8& blk, const XRow* x, int s, int b, __m256i* isum) {
  const __m256i table = _mm256_broadcastsi128_si256(
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(IQ4_NLx16::kLevelsU8.data())));
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  for (int t = 0; t < T; t++) {
    isum[t] = _mm256_set1_epi32(-128 * (x[t].sum16[2 * b] + x[t].sum16[2 * b + 1]));
  }
#pragma GCC unroll 4
  for (int m = 0; m < 4; m++) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qs[s][m]));
    const __m256i lo = _mm256_shuffle_epi8(table, _mm256_and_si256(q, low4));
    const __m256i hi = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(q, 4), low4));
    for (int t = 0; t < T; t++) {
      isum[t] = Core::Add(isum[t], lo, Broadcast4(x[t].qs + 32 * b + 4 * m));
      isum[t] = Core::Add(isum[t], hi, Broadcast4(x[t].qs + 32 * b + 16 + 4 * m));
    }
  }
}

// One IQ4_XSx8 super-block into acc[t] for T tokens: indices looked up in kIq4NlValues (one
// vpshufb), |level| against the activation quants with the level's sign (as Q6_K), int32 sums
// (AddWide: a pair of products reaches 2 * 127 * 127), scaled by ls - 32, then one fma a block.
template <class Core, int T>
inline void SuperBlock(const IQ4_XSx8& blk, const XRow* x, int sb, __m256* acc) {
  const __m256i table =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4NlValues)));
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  const __m256 d = LoadHalves(blk.d);
  for (int s = 0; s < 8; s++) {
    const int b = 8 * sb + s;
    __m256i isum[T];
    for (int t = 0; t < T; t++) isum[t] = _mm256_setzero_si256();
    if constexpr (Core::kAnyUnsigned) {
      IQ4_XSBlockUnsigned<Core, T>(blk, x, s, b, isum);
    } else {
#pragma GCC unroll 4
      for (int m = 0; m < 4; m++) {
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qs[s][m]));
        const __m256i lo = _mm256_shuffle_epi8(table, _mm256_and_si256(q, low4));
        const __m256i hi =
            _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(q, 4), low4));
        const __m256i alo = _mm256_abs_epi8(lo), ahi = _mm256_abs_epi8(hi);
        for (int t = 0; t < T; t++) {
          const __m256i x0 = _mm256_sign_epi8(Broadcast4(x[t].qs + 32 * b + 4 * m), lo);
          const __m256i x1 = _mm256_sign_epi8(Broadcast4(x[t].qs + 32 * b + 16 + 4 * m), hi);
          isum[t] = Core::AddWide(isum[t], alo, x0);
          isum[t] = Core::AddWide(isum[t], ahi, x1);
        }
      }
    }
    const __m256i sc = Bytes(blk.scales[s]);
    for (int t = 0; t < T; t++) {
      const __m256 scale = _mm256_mul_ps(d, _mm256_set1_ps(x[t].d[b]));
      const __m256i scaled = _mm256_mullo_epi32(isum[t], sc);  // (ls - 32) * isum, exact
      acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(scaled), scale, acc[t]);
    }
  }
}

// ---- Q6_K ----

// Quarters K0 and K0 + 2 (K0 = 0 or 1) of half h share the ql bytes (low / high nibbles) and the
// qh bytes (bits 2 K0, 2 K0 + 1 / 2 K0 + 4, 2 K0 + 5): the 6-bit quants q (0 .. 63) of elements
// 4m .. 4m + 3 of both, for 8 rows.
template <int K0>
inline void Q6Quants(const Q6_Kx8& blk, int h, int m, __m256i* q0, __m256i* q1) {
  const __m256i ql = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.ql[h][m + 8 * K0]));
  const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qh[h][m]));
  const __m256i low4 = _mm256_set1_epi8(0x0f), bits45 = _mm256_set1_epi8(0x30);
  // High bits moved to bits 4, 5 by 16-bit shifts: the mask drops what crossed a byte.
  const __m256i h0 =
      _mm256_and_si256(K0 == 0 ? _mm256_slli_epi16(qh, 4) : _mm256_slli_epi16(qh, 2), bits45);
  const __m256i h1 = _mm256_and_si256(K0 == 0 ? qh : _mm256_srli_epi16(qh, 2), bits45);
  const __m256i l0 = _mm256_and_si256(ql, low4);
  const __m256i l1 = _mm256_and_si256(_mm256_srli_epi16(ql, 4), low4);
  *q0 = _mm256_or_si256(l0, h0);
  *q1 = _mm256_or_si256(l1, h1);
}

// The same elements' weights q - 32.
template <int K0>
inline void Q6Weights(const Q6_Kx8& blk, int h, int m, __m256i* w0, __m256i* w1) {
  Q6Quants<K0>(blk, h, m, w0, w1);
  const __m256i m32 = _mm256_set1_epi8(32);
  *w0 = _mm256_sub_epi8(*w0, m32);
  *w1 = _mm256_sub_epi8(*w1, m32);
}

// isum0[t] / isum1[t] = the scaled integer dot products of quarters K0 / K0 + 2 of half h of
// super-block sb with token t: sc0 * isum(first 16) + sc1 * isum(last 16) per row lane.
template <class Core, int T, int K0>
inline void Q6QuarterPair(const Q6_Kx8& blk, const XRow* x, int sb, int h, __m256i* isum0,
                          __m256i* isum1) {
  const int b0 = 8 * sb + 4 * h + K0, b1 = b0 + 2;  // their activation blocks
  for (int t = 0; t < T; t++) isum0[t] = isum1[t] = _mm256_setzero_si256();
  for (int sub = 0; sub < 2; sub++) {
    // Core accumulators of (q - 32) * x: 4 steps of |q - 32| <= 32 and |x| <= 127.
    __m256i acc0[T], acc1[T];
    for (int t = 0; t < T; t++) acc0[t] = acc1[t] = _mm256_setzero_si256();
#pragma GCC unroll 1
    for (int m = 4 * sub; m < 4 * sub + 4; m++) {
      __m256i w0, w1;
      Q6Weights<K0>(blk, h, m, &w0, &w1);
      const __m256i a0 = _mm256_abs_epi8(w0), a1 = _mm256_abs_epi8(w1);  // the unsigned side
      for (int t = 0; t < T; t++) {
        const __m256i x0 = _mm256_sign_epi8(Broadcast4(x[t].qs + 32 * b0 + 4 * m), w0);
        const __m256i x1 = _mm256_sign_epi8(Broadcast4(x[t].qs + 32 * b1 + 4 * m), w1);
        acc0[t] = Core::Add(acc0[t], a0, x0);
        acc1[t] = Core::Add(acc1[t], a1, x1);
      }
    }
    const __m256i sc0 = Core::Factor(Bytes(blk.scales[8 * h + 2 * K0 + sub]));
    const __m256i sc1 = Core::Factor(Bytes(blk.scales[8 * h + 2 * (K0 + 2) + sub]));
    for (int t = 0; t < T; t++) {
      const __m256i p0 = Core::Scale(acc0[t], sc0), p1 = Core::Scale(acc1[t], sc1);
      isum0[t] = _mm256_add_epi32(isum0[t], p0);
      isum1[t] = _mm256_add_epi32(isum1[t], p1);
    }
  }
}

// Decode (one token): the four quarters of half h at once, so ql and qh are loaded and unpacked
// once per step; isum[k][0] as Q6QuarterPair gives it. On a core whose Add takes any unsigned
// bytes (VNNI) the quants q (0 .. 63) go in as they are and 32 * (the sub-block's 16 activation
// quants' sum, from the kQ8K row) comes off before the scale: the same exact integers with 12
// fewer vector ops a step (no q - 32, no sign / abs pair a quarter).
template <class Core>
inline void Q6HalfOneToken(const Q6_Kx8& blk, const XRow& x, int sb, int h, __m256i (*isum)[1]) {
  const int b0 = 8 * sb + 4 * h;
  for (int k = 0; k < 4; k++) isum[k][0] = _mm256_setzero_si256();
  for (int sub = 0; sub < 2; sub++) {
    __m256i acc[4];
    for (int k = 0; k < 4; k++) acc[k] = _mm256_setzero_si256();
#pragma GCC unroll 1
    for (int m = 4 * sub; m < 4 * sub + 4; m++) {
      __m256i w[4];
      if constexpr (Core::kAnyUnsigned) {
        Q6Quants<0>(blk, h, m, &w[0], &w[2]);
        Q6Quants<1>(blk, h, m, &w[1], &w[3]);
      } else {
        Q6Weights<0>(blk, h, m, &w[0], &w[2]);
        Q6Weights<1>(blk, h, m, &w[1], &w[3]);
      }
      for (int k = 0; k < 4; k++) {
        const __m256i xb = Broadcast4(x.qs + 32 * (b0 + k) + 4 * m);
        if constexpr (Core::kAnyUnsigned) {
          acc[k] = Core::Add(acc[k], w[k], xb);
        } else {
          acc[k] = Core::Add(acc[k], _mm256_abs_epi8(w[k]), _mm256_sign_epi8(xb, w[k]));
        }
      }
    }
    for (int k = 0; k < 4; k++) {
      const __m256i sc = Core::Factor(Bytes(blk.scales[8 * h + 2 * k + sub]));
      if constexpr (Core::kAnyUnsigned) {
        acc[k] = _mm256_sub_epi32(acc[k], _mm256_set1_epi32(32 * x.sum16[2 * (b0 + k) + sub]));
      }
      isum[k][0] = _mm256_add_epi32(isum[k][0], Core::Scale(acc[k], sc));
    }
  }
}

template <class Core, int T>
inline void SuperBlock(const Q6_Kx8& blk, const XRow* x, int sb, __m256* acc) {
  const __m256 d = LoadHalves(blk.d);
  for (int h = 0; h < 2; h++) {
    __m256i isum[4][T];  // by quarter of the half
    if constexpr (T == 1) {
      Q6HalfOneToken<Core>(blk, x[0], sb, h, isum);
    } else {  // the unsigned form in these tiles measured 3-7% slower (tokens:128)
      Q6QuarterPair<Core, T, 0>(blk, x, sb, h, isum[0], isum[2]);
      Q6QuarterPair<Core, T, 1>(blk, x, sb, h, isum[1], isum[3]);
    }
    for (int k = 0; k < 4; k++) {  // the float steps in block order
      const int b = 8 * sb + 4 * h + k;
      for (int t = 0; t < T; t++) {
        const __m256 scale = _mm256_mul_ps(d, _mm256_set1_ps(x[t].d[b]));
        acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[k][t]), scale, acc[t]);
      }
    }
  }
}

// ---- the kernel of the shared row-group driver (q8_rows.h) ----

// Decode settings per format, measured on Zen 3 (kernels_bench 1B shapes, tokens:1, one thread):
// Q4_K runs 4 groups in flight sharing the activation broadcasts (1.2-1.3x over 1 group; software
// prefetch on top made it slower). Q6_K's gain is the software prefetch of the next super-block
// (~1.9x); 2 or 4 groups in flight were slower than 1.
template <typename Packed>
constexpr int kKqTailGroups = 1;
// With AVX-512's 32 vector registers 8 groups fit in flight: Zen 4 (family 25 model 17), one
// thread, 1B.w1 tokens:1 403 -> 308 us (15.0 -> 19.6 GB/s), w2 327 -> 287 us; 2 groups 459 us.
// The Q6_K and IQ4_XS walks at 2 groups, group after group, ran 3x / 2x slower there.
template <>
#if defined(__AVX512VL__)
constexpr int kKqTailGroups<Q4_Kx8> = 8;
#else
constexpr int kKqTailGroups<Q4_Kx8> = 4;
#endif
// Prefill tiles (tokens:128): Q4_K 2 groups x 4 tokens sharing each activation broadcast (~5-15%
// over 1 x 4; 1 x 8 measured about the same, 3 x 4 and a less unrolled 2 x 4 slower). Q6_K stays
// 1 x 4: fences against its spills and 1 x 2 were no faster.
template <typename Packed>
constexpr int kKqTileGroups = 1;
template <>
constexpr int kKqTileGroups<Q4_Kx8> = 2;
constexpr int kKqTileTokens = 4;
// 2-3 tokens left over a 4-token tile (2-3 streams; 7 = 4 + 3): Q4_K runs them as one 2-group
// tile sharing the unpacked weights (kernels_bench Q4_K 1B.w1, one core, 6 rounds: tokens:3
// median 1286 -> 1175 us; tokens:7 no change measured); Q6_K's 1 x 2 and 1 x 3 tiles were slower
// than token by token (tokens:3 2011-2665 -> 3166-4573 us), so it keeps them one at a time.
template <typename Packed>
constexpr int kKqRaggedGroups = 0;
template <>
constexpr int kKqRaggedGroups<Q4_Kx8> = 2;
template <typename Packed>
constexpr int kKqPrefetchSupers = 0;
template <>
constexpr int kKqPrefetchSupers<Q6_Kx8> = 1;
template <>
constexpr int kKqPrefetchSupers<Q5_Kx8> = 1;
template <>
constexpr int kKqPrefetchSupers<IQ4_XSx8> = 1;

// Super-block sb of groups grp[0 .. G) for T tokens. Q4_K tiles of several groups interleave them
// sub-block by sub-block; otherwise group after group.
template <class Core, int G, int T, typename Packed>
inline void SuperBlockTile(const Packed* const* grp, const XRow* x, int sb, __m256 (*acc)[T]) {
  for (int i = 0; i < G; i++) SuperBlock<Core, T>(grp[i][sb], x, sb, acc[i]);
}
template <class Core, int G, int T>
inline void SuperBlockTile(const Q4_Kx8* const* grp, const XRow* x, int sb, __m256 (*acc)[T]) {
  if constexpr (T == 1 && G > 1) {
    for (int p = 0; p < 4; p++) SubBlockPairOneToken<Core, G>(grp, x[0], sb, p, acc);
  } else if constexpr (G > 1) {
    for (int p = 0; p < 4; p++) {
      SubBlockGroups<Core, G, T, 0>(grp, x, sb, p, acc);
      SubBlockGroups<Core, G, T, 1>(grp, x, sb, p, acc);
    }
  } else {
    for (int i = 0; i < G; i++) SuperBlock<Core, T>(grp[i][sb], x, sb, acc[i]);
  }
}

// The kernel of the shared row-group driver (q8_rows.h): super-blocks left to right.
template <typename PackedT, class Core>
struct KQuantKernel {
  using Packed = PackedT;
  static constexpr int kBlockElems = kQkK;

  template <int G, int T>
  static void Tile(const Packed* const* grp, int n_super, const XRow* x, __m256 (*acc)[T],
                   bool ahead) {
    for (int sb = 0; sb < n_super; sb++) {
      if (T == 1 && 0 < kKqPrefetchSupers<Packed>) {  // decode streams the weights from DRAM once
        for (int i = 0; i < G; i++)
          Prefetch(grp[i] + sb + kKqPrefetchSupers<Packed>, sizeof(Packed));
      }
      if (T > 1 && ahead) {  // super-block sb of the next G groups, into L2 (Q8Kernel::TileOf)
        for (int i = 0; i < G; i++) PrefetchL2(grp[i] + G * n_super + sb, sizeof(Packed));
      }
      SuperBlockTile<Core, G, T>(grp, x, sb, acc);
    }
  }
};

// Prefill: kKqTileGroups groups at a time over tiles of 4 tokens (4 tokens share each unpacked
// weight register); for Q4_K 2-3 tokens left as one tile (they share the unpacking too); the
// other tail tokens (all of them in decode) one at a time over kKqTailGroups groups.
template <typename Packed, class Core>
void MatmulKQuantPacked(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulRowGroups<KQuantKernel<Packed, Core>, kKqTileGroups<Packed>, kKqTileTokens,
                  kKqTailGroups<Packed>, kKqTileGroups<Packed>, kKqTileTokens,
                  kKqRaggedGroups<Packed>>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

}  // namespace smallmind::kernels::SMALLMIND_X86_NS
