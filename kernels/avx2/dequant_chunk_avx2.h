// AVX2 dequantization of weight-row chunks of the float and 32-element block types into floats,
// bitwise equal to kernels/ref/dequant_ref (K-quants: kquant_chunk_avx2.h). Used by the
// deterministic AVX2 matmul (matmul_avx2.cc) only. Pure; thread-safe.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/avx2/avx2_util.h"
#include "kernels/quant_blocks.h"

namespace smallmind::kernels::avx2 {

// Each Chunk(row, k0, n, out) writes out[0 .. n) = elements [k0, k0 + n) of the row at `row` and
// zeros up to the next multiple of 8. k0 is a multiple of 256 and n <= 256; for block types n is
// a multiple of the block size. Types with kUnitVecs > 0 also have Unit(row, u, v): the kUnitVecs
// vectors of elements [8 * kUnitVecs * u, 8 * kUnitVecs * (u + 1)) straight into registers (the
// decode path), bitwise what Chunk writes.

struct F32Chunk {
  static constexpr int kUnitVecs = 1;
  static void Unit(const uint8_t* row, int u, __m256* v) {
    v[0] = _mm256_loadu_ps(reinterpret_cast<const float*>(row) + 8 * u);
  }
  static size_t RowBytes(int n) { return 4 * static_cast<size_t>(n); }
  static void Chunk(const uint8_t* row, int k0, int n, float* out) {
    const float* src = reinterpret_cast<const float*>(row) + k0;
    int j = 0;
    for (; j + 8 <= n; j += 8) _mm256_store_ps(out + j, _mm256_loadu_ps(src + j));
    if (j < n) _mm256_store_ps(out + j, LoadTail(src + j, n - j));
  }
};

struct F16Chunk {
  static constexpr int kUnitVecs = 1;
  static void Unit(const uint8_t* row, int u, __m256* v) {
    v[0] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row) + u));
  }
  static size_t RowBytes(int n) { return 2 * static_cast<size_t>(n); }
  static void Chunk(const uint8_t* row, int k0, int n, float* out) {
    const uint16_t* src = reinterpret_cast<const uint16_t*>(row) + k0;
    int j = 0;
    for (; j + 8 <= n; j += 8) {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + j));
      _mm256_store_ps(out + j, _mm256_cvtph_ps(h));
    }
    if (j < n) {
      uint16_t tail[8] = {};
      std::memcpy(tail, src + j, 2 * static_cast<size_t>(n - j));
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(tail));
      _mm256_store_ps(out + j, _mm256_cvtph_ps(h));  // the zero halves give +0.0f
    }
  }
};

struct Bf16Chunk {
  static constexpr int kUnitVecs = 1;
  static void Unit(const uint8_t* row, int u, __m256* v) {
    v[0] = Widen(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row) + u));
  }
  static size_t RowBytes(int n) { return 2 * static_cast<size_t>(n); }
  static __m256 Widen(__m128i b) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(b), 16));
  }
  static void Chunk(const uint8_t* row, int k0, int n, float* out) {
    const uint16_t* src = reinterpret_cast<const uint16_t*>(row) + k0;
    int j = 0;
    for (; j + 8 <= n; j += 8) {
      _mm256_store_ps(out + j, Widen(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + j))));
    }
    if (j < n) {
      uint16_t tail[8] = {};
      std::memcpy(tail, src + j, 2 * static_cast<size_t>(n - j));
      _mm256_store_ps(out + j, Widen(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tail))));
    }
  }
};

struct Q8_0Chunk {
  static constexpr int kUnitVecs = 4;
  static void Unit(const uint8_t* row, int u, __m256* v) {
    const BlockQ8_0* b = reinterpret_cast<const BlockQ8_0*>(row) + u;
    const __m256 d = _mm256_set1_ps(HalfToFloat(b->d));
    for (int g = 0; g < 4; g++) {
      const __m128i q = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b->qs + 8 * g));
      v[g] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q)), d);
    }
  }
  static size_t RowBytes(int n) { return static_cast<size_t>(n / kQk8_0) * sizeof(BlockQ8_0); }
  static void Chunk(const uint8_t* row, int k0, int n, float* out) {
    const BlockQ8_0* b = reinterpret_cast<const BlockQ8_0*>(row) + k0 / kQk8_0;
    for (int i = 0; i < n / kQk8_0; i++, b++, out += kQk8_0) {
      const __m256 d = _mm256_set1_ps(HalfToFloat(b->d));
      for (int g = 0; g < 4; g++) {
        const __m128i q = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b->qs + 8 * g));
        _mm256_store_ps(out + 8 * g, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q)), d));
      }
    }
  }
};

struct Q4_0Chunk {
  static constexpr int kUnitVecs = 4;
  // (u - 8) * d as fmsub(u, d, 8d): (u - 8) * d is exact before the one rounding either way.
  static __m256 Fast(__m128i q, __m256 d, __m256 d8) {
    return _mm256_fmsub_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(q)), d, d8);
  }
  static void Unit(const uint8_t* row, int u, __m256* v) {
    const BlockQ4_0* b = reinterpret_cast<const BlockQ4_0*>(row) + u;
    const float df = HalfToFloat(b->d);
    const __m256 d = _mm256_set1_ps(df), d8 = _mm256_set1_ps(8.0f * df);
    const __m128i low4 = _mm_set1_epi8(0x0f);
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->qs));
    const __m128i lo = _mm_and_si128(q, low4);
    const __m128i hi = _mm_and_si128(_mm_srli_epi16(q, 4), low4);
    v[0] = Fast(lo, d, d8);
    v[1] = Fast(_mm_srli_si128(lo, 8), d, d8);
    v[2] = Fast(hi, d, d8);
    v[3] = Fast(_mm_srli_si128(hi, 8), d, d8);
  }
  static size_t RowBytes(int n) { return static_cast<size_t>(n / kQk4_0) * sizeof(BlockQ4_0); }
  // (nibble - 8) * d for the 8 nibbles in the low 8 bytes of q.
  static __m256 Values(__m128i q, __m256 d) {
    const __m256i v = _mm256_sub_epi32(_mm256_cvtepu8_epi32(q), _mm256_set1_epi32(8));
    return _mm256_mul_ps(_mm256_cvtepi32_ps(v), d);
  }
  static void Chunk(const uint8_t* row, int k0, int n, float* out) {
    const BlockQ4_0* b = reinterpret_cast<const BlockQ4_0*>(row) + k0 / kQk4_0;
    const __m128i low4 = _mm_set1_epi8(0x0f);
    for (int i = 0; i < n / kQk4_0; i++, b++, out += kQk4_0) {
      const __m256 d = _mm256_set1_ps(HalfToFloat(b->d));
      const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->qs));
      const __m128i lo = _mm_and_si128(q, low4);                     // elements 0..15
      const __m128i hi = _mm_and_si128(_mm_srli_epi16(q, 4), low4);  // elements 16..31
      _mm256_store_ps(out, Values(lo, d));
      _mm256_store_ps(out + 8, Values(_mm_srli_si128(lo, 8), d));
      _mm256_store_ps(out + 16, Values(hi, d));
      _mm256_store_ps(out + 24, Values(_mm_srli_si128(hi, 8), d));
    }
  }
};

}  // namespace smallmind::kernels::avx2
