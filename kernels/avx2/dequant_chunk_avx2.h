// AVX2 conversion of weight-row chunks of the float types (F32, F16, BF16) into floats, bitwise
// equal to kernels/ref/dequant_ref. Used by the float-activation AVX2 matmul (matmul_avx2.cc) only.
// Pure; thread-safe.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/quant_blocks.h"
#include "kernels/x86/x86_util.h"

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

}  // namespace smallmind::kernels::avx2
