// Inline x86 helpers (256-bit AVX2/FMA/F16C) shared by the x86 kernel folders: kernels/avx2/ and
// the kernels/avx512/, kernels/avx_vnni/ and kernels/amx/ files that reuse them, each compiled with
// its folder's ISA flags (so only those folders may include kernels/x86/).
// Everything lives in its own namespace (below) so no symbol can be merged with a copy built for
// another ISA. Pure functions; thread-safe.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

// The namespace of the inline helpers in kernels/x86/*.h: avx2, except in a file built with more
// ISA flags (kernels/avx512/, kernels/avx_vnni/), which defines it first (as avx512 or avx_vnni)
// so its copies of these functions, compiled with those flags, are other symbols: the linker can
// never keep one of them for an AVX2 caller on a CPU without those instructions.
#ifndef SMALLMIND_X86_NS
#define SMALLMIND_X86_NS avx2
#endif

namespace smallmind::kernels::SMALLMIND_X86_NS {

// The 8 lanes of v summed as ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)): the fixed fold
// every deterministic AVX2 reduction ends with.
inline float Fold(__m256 v) {
  const __m128 pairs = _mm_hadd_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 quads = _mm_hadd_ps(pairs, pairs);  // [l0..3 sum, l4..7 sum, ...]
  return _mm_cvtss_f32(_mm_add_ss(quads, _mm_movehdup_ps(quads)));
}

// Software prefetch of the cache lines of [p, p + bytes) (past a matrix's end: a harmless hint),
// into L1 (kHint _MM_HINT_T0) or only into L2 (_MM_HINT_T1, PrefetchL2).
template <int kHint = _MM_HINT_T0>
inline void Prefetch(const void* p, size_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (size_t off = 0; off < bytes; off += 64) _mm_prefetch(c + off, static_cast<_mm_hint>(kHint));
}
// Into L2 only: for a stream fetched a whole weight group ahead (tens of KB, more than L1 holds),
// where a prefetcht0 per line would also hold one of the core's few L1 miss buffers until the line
// arrives (see Q8Kernel::TileOf).
inline void PrefetchL2(const void* p, size_t bytes) { Prefetch<_MM_HINT_T1>(p, bytes); }

// x rounded to the nearest IEEE half (ties to even) and back: Fp16ToFp32(Fp32ToFp16(x)).
inline float RoundToHalf(float x) {
  return _mm_cvtss_f32(
      _mm_cvtph_ps(_mm_cvtps_ph(_mm_set_ss(x), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
}

// The 32 floats at x loaded into v, and their largest magnitude.
inline float LoadAbsMax32(const float* x, __m256 v[4]) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 amax = _mm256_setzero_ps();
  for (int g = 0; g < 4; g++) {
    v[g] = _mm256_loadu_ps(x + 8 * g);
    amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign, v[g]));
  }
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

// Quants round-half-even(v * id) stored at qs (32 bytes, in order); their sum into *sum when
// given.
inline void StoreQuants32(const __m256 v[4], float id, int8_t* qs, int* sum) {
  const __m256 scale = _mm256_set1_ps(id);
  __m256i q[4];
  for (int g = 0; g < 4; g++) {
    q[g] = _mm256_cvtps_epi32(
        _mm256_round_ps(_mm256_mul_ps(v[g], scale), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  if (sum != nullptr) {
    const __m256i sum4 =
        _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3]));
    __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(sum4), _mm256_extracti128_si256(sum4, 1));
    s4 = _mm_hadd_epi32(s4, s4);
    s4 = _mm_hadd_epi32(s4, s4);
    *sum = _mm_cvtsi128_si32(s4);
  }
  const __m256i p =
      _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs),
                      _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
}

// 32 floats of x as Q8 quants q = round-half-even(x * (1 / d)), d = max|x| / 127 (q = 0 when d is
// 0): stores the 32 quants at qs, returns d and, when `sum` is given, the sum of the quants. The
// K/V cache's and the attention query heads' quantizer (bitwise its reference).
inline float QuantizeBlockQ8(const float* x, int8_t* qs, int* sum = nullptr) {
  __m256 v[4];
  const float d = LoadAbsMax32(x, v) / 127.0f;
  StoreQuants32(v, d != 0.0f ? 1.0f / d : 0.0f, qs, sum);
  return d;
}

// llama.cpp's q8_0 block of 32 activations (the kQ8 and kQ8_1 rows, kernels/q8_act.h): quants
// round-half-even(x * (127 / amax)) into qs, their sum into *sum, amax / 127 into *d_exact;
// returns fp16(amax / 127) as a float (F16C, round-to-nearest-even: Fp32ToFp16's bits).
// Bitwise kernels/ref QuantizeBlockQ8_0Ref.
inline float QuantizeBlockQ8_0(const float* x, int8_t* qs, int* sum, float* d_exact) {
  __m256 v[4];
  const float max = LoadAbsMax32(x, v);
  StoreQuants32(v, max != 0.0f ? 127.0f / max : 0.0f, qs, sum);
  *d_exact = max / 127.0f;
  return RoundToHalf(*d_exact);
}

// A mask whose first n (0..8) int32 lanes are all ones, for maskload/maskstore of a tail.
inline __m256i TailMask(int n) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lanes);
}

// Loads n (0..8) floats from p, zero in the other lanes, reading nothing past p + n.
inline __m256 LoadTail(const float* p, int n) { return _mm256_maskload_ps(p, TailMask(n)); }
inline void StoreTail(float* p, int n, __m256 v) { _mm256_maskstore_ps(p, TailMask(n), v); }

// e^x for every lane, within about 2 ulp for x in [-87, 88] (0 below, inf above): x = n ln2 + r
// with |r| <= ln2 / 2, e^r by a degree-6 polynomial (Cephes expf coefficients), times 2^n.
inline __m256 Exp(__m256 x) {
  x = _mm256_min_ps(x, _mm256_set1_ps(88.3762626647949f));
  x = _mm256_max_ps(x, _mm256_set1_ps(-88.3762626647949f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);  // ln2 split in two for
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);      // an exact n * ln2_hi
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  // 2^n in the exponent field; n in [-128, 128], so build it in two halves to stay normal.
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i half = _mm256_srai_epi32(ni, 1);
  const __m256 s1 =
      _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(half, _mm256_set1_epi32(127)), 23));
  const __m256 s2 = _mm256_castsi256_ps(
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(ni, half), _mm256_set1_epi32(127)), 23));
  return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

// An 8 x 8 transpose of int32 lanes: r[j] = quads 0-7 of token j -> r[k] = quad k of tokens
// 0-7 (the Q8 octet quantizers' last step, kernels/q8_act.h).
inline void Transpose8x8(__m256i* r) {
  __m256i t[8], u[8];
  for (int i = 0; i < 4; i++) {
    t[2 * i] = _mm256_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  for (int h = 0; h < 2; h++) {  // tokens 0-3, then 4-7: per 128-bit lane quads k and k + 4
    u[4 * h + 0] = _mm256_unpacklo_epi64(t[4 * h + 0], t[4 * h + 2]);
    u[4 * h + 1] = _mm256_unpackhi_epi64(t[4 * h + 0], t[4 * h + 2]);
    u[4 * h + 2] = _mm256_unpacklo_epi64(t[4 * h + 1], t[4 * h + 3]);
    u[4 * h + 3] = _mm256_unpackhi_epi64(t[4 * h + 1], t[4 * h + 3]);
  }
  for (int k = 0; k < 4; k++) {
    r[k] = _mm256_permute2x128_si256(u[k], u[k + 4], 0x20);
    r[k + 4] = _mm256_permute2x128_si256(u[k], u[k + 4], 0x31);
  }
}

}  // namespace smallmind::kernels::SMALLMIND_X86_NS
