// AVX2 dequantization of one 256-element chunk of a Q4_K or Q6_K weight row into floats, bitwise
// equal to kernels/ref/dequant_ref, with the Chunk interface of dequant_chunk_avx2.h (no register
// Unit: the decode path uses the chunk buffer). Used by matmul_avx2.cc only. Pure; thread-safe.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/avx2/avx2_util.h"
#include "kernels/quant_blocks.h"

namespace smallmind::kernels::avx2 {

struct Q4_KChunk {
  static constexpr int kUnitVecs = 0;
  static void Unit(const uint8_t*, int, __m256*) {}
  static size_t RowBytes(int n) { return static_cast<size_t>(n / kQkK) * sizeof(BlockQ4_K); }
  // ggml's get_scale_min_k4 (see kernels/ref/dequant_ref.cc).
  static void ScaleMin(int j, const uint8_t* q, int* scale, int* min) {
    if (j < 4) {
      *scale = q[j] & 63;
      *min = q[j + 4] & 63;
    } else {
      *scale = (q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4);
      *min = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
  }
  // d * nibble - m for the 8 nibbles (already masked) in the low 8 bytes of q.
  static __m256 Values(__m128i q, __m256 d, __m256 m) {
    return _mm256_sub_ps(_mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(q))), m);
  }
  static void Chunk(const uint8_t* row, int k0, int n, float* out) {
    const BlockQ4_K* b = reinterpret_cast<const BlockQ4_K*>(row) + k0 / kQkK;
    const __m128i low4 = _mm_set1_epi8(0x0f);
    for (int i = 0; i < n / kQkK; i++, b++, out += kQkK) {
      const float d = HalfToFloat(b->d);
      const float dmin = HalfToFloat(b->dmin);
      for (int g = 0; g < 4; g++) {  // 64 outputs from 32 bytes: low nibbles, then high
        int sc_lo, m_lo, sc_hi, m_hi;
        ScaleMin(2 * g, b->scales, &sc_lo, &m_lo);
        ScaleMin(2 * g + 1, b->scales, &sc_hi, &m_hi);
        const __m256 d_lo = _mm256_set1_ps(d * static_cast<float>(sc_lo));
        const __m256 min_lo = _mm256_set1_ps(dmin * static_cast<float>(m_lo));
        const __m256 d_hi = _mm256_set1_ps(d * static_cast<float>(sc_hi));
        const __m256 min_hi = _mm256_set1_ps(dmin * static_cast<float>(m_hi));
        for (int h = 0; h < 2; h++) {  // bytes 16h .. 16h + 15 of this group
          const __m128i q =
              _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->qs + 32 * g + 16 * h));
          const __m128i lo = _mm_and_si128(q, low4);
          const __m128i hi = _mm_and_si128(_mm_srli_epi16(q, 4), low4);
          float* o = out + 64 * g + 16 * h;
          _mm256_store_ps(o, Values(lo, d_lo, min_lo));
          _mm256_store_ps(o + 8, Values(_mm_srli_si128(lo, 8), d_lo, min_lo));
          _mm256_store_ps(o + 32, Values(hi, d_hi, min_hi));
          _mm256_store_ps(o + 40, Values(_mm_srli_si128(hi, 8), d_hi, min_hi));
        }
      }
    }
  }
};

struct Q6_KChunk {
  static constexpr int kUnitVecs = 0;
  static void Unit(const uint8_t*, int, __m256*) {}
  static size_t RowBytes(int n) { return static_cast<size_t>(n / kQkK) * sizeof(BlockQ6_K); }
  static __m256i Bytes(const uint8_t* p) {  // 8 bytes widened to int32 lanes
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  static void Chunk(const uint8_t* row, int k0, int n, float* out) {
    const BlockQ6_K* b = reinterpret_cast<const BlockQ6_K*>(row) + k0 / kQkK;
    const __m256i low4 = _mm256_set1_epi32(0x0f);
    const __m256i two = _mm256_set1_epi32(3);
    const __m256i bias = _mm256_set1_epi32(32);
    for (int i = 0; i < n / kQkK; i++, b++, out += kQkK) {
      const float d = HalfToFloat(b->d);
      for (int h = 0; h < 2; h++) {  // layout in kernels/ref/dequant_ref.cc
        const uint8_t* ql = b->ql + 64 * h;
        const uint8_t* qh = b->qh + 32 * h;
        const int8_t* sc = b->scales + 8 * h;
        float* o = out + 128 * h;
        for (int l = 0; l < 32; l += 8) {
          const int s = l / 16;
          const __m256i a = Bytes(ql + l), c = Bytes(ql + l + 32), hb = Bytes(qh + l);
          const __m256i q[4] = {
              _mm256_or_si256(_mm256_and_si256(a, low4),
                              _mm256_slli_epi32(_mm256_and_si256(hb, two), 4)),
              _mm256_or_si256(
                  _mm256_and_si256(c, low4),
                  _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(hb, 2), two), 4)),
              _mm256_or_si256(
                  _mm256_srli_epi32(a, 4),
                  _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(hb, 4), two), 4)),
              _mm256_or_si256(
                  _mm256_srli_epi32(c, 4),
                  _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(hb, 6), two), 4))};
          for (int k = 0; k < 4; k++) {
            const __m256 ds = _mm256_set1_ps(d * static_cast<float>(sc[s + 2 * k]));
            const __m256 v = _mm256_cvtepi32_ps(_mm256_sub_epi32(q[k], bias));
            _mm256_store_ps(o + l + 32 * k, _mm256_mul_ps(ds, v));
          }
        }
      }
    }
  }
};

}  // namespace smallmind::kernels::avx2
