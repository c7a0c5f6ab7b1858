// AVX2 matmuls of the float weight types (F32, F16, BF16) over float activations: weights are
// converted (bitwise as the reference does) one 256-element chunk of up to 16 rows at a time into
// an L1 buffer, then every (row, token) output reduces the chunk with 8 lane FMA accumulators. The
// reduction order is in kernels_avx2.h; it depends on nothing but in_dim, so tiles, batch and row
// ranges never change a bit of the result.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/avx2/dequant_chunk_avx2.h"
#include "kernels/avx2/kernels_avx2.h"
#include "kernels/x86/x86_util.h"

namespace smallmind::kernels::avx2 {
namespace {

constexpr int kChunk = 256;    // elements per fold; a multiple of every block size
constexpr int kRowBlock = 16;  // rows dequantized together: 16 KiB of floats, half an L1

// sums[r * T + t] = Fold of the 8-lane FMA reduction of wbuf row r against x row t over n
// elements (the last partial group of 8 zero-padded). wbuf rows are kChunk apart.
template <int R, int T>
inline void DotTile(const float* wbuf, const float* const* x, int n, float* sums) {
  __m256 acc[R][T];
  for (int r = 0; r < R; r++) {
    for (int t = 0; t < T; t++) acc[r][t] = _mm256_setzero_ps();
  }
  const int full = n & ~7;
  for (int j = 0; j < full; j += 8) {
    __m256 xv[T];
    for (int t = 0; t < T; t++) xv[t] = _mm256_loadu_ps(x[t] + j);
    __m256 wv[R];
    for (int r = 0; r < R; r++) wv[r] = _mm256_load_ps(wbuf + r * kChunk + j);
    for (int r = 0; r < R; r++) {
      for (int t = 0; t < T; t++) acc[r][t] = _mm256_fmadd_ps(wv[r], xv[t], acc[r][t]);
    }
  }
  if (full < n) {
    __m256 xv[T];
    for (int t = 0; t < T; t++) xv[t] = LoadTail(x[t] + full, n - full);
    for (int r = 0; r < R; r++) {
      const __m256 wv = _mm256_load_ps(wbuf + r * kChunk + full);
      for (int t = 0; t < T; t++) acc[r][t] = _mm256_fmadd_ps(wv, xv[t], acc[r][t]);
    }
  }
  for (int r = 0; r < R; r++) {
    for (int t = 0; t < T; t++) sums[r * T + t] = Fold(acc[r][t]);
  }
}

// Adds the chunk sums of rows [r0, r0 + R) x tokens [t0, t0 + T) into y (first chunk: stores).
template <int R, int T>
inline void TileIntoY(const float* wbuf, const float* x, int in_dim, int k0, int n, int t0, int r0,
                      int out_dim, float* y) {
  const float* xr[T];
  for (int t = 0; t < T; t++) xr[t] = x + static_cast<int64_t>(t0 + t) * in_dim + k0;
  float sums[R * T];
  DotTile<R, T>(wbuf, xr, n, sums);
  for (int r = 0; r < R; r++) {
    for (int t = 0; t < T; t++) {
      float& out = y[static_cast<int64_t>(t0 + t) * out_dim + r0 + r];
      out = k0 == 0 ? sums[r * T + t] : out + sums[r * T + t];
    }
  }
}

// Rows [r0, r0 + rows) for tokens [t0, t0 + T): tiles of 3 rows (3 x 3 accumulators, 3 weight
// and 3 activation registers: 16 at most), then the last 1 or 2 rows.
template <int T>
inline void RowsIntoY(int rows, const float* wbuf, const float* x, int in_dim, int k0, int n,
                      int t0, int r0, int out_dim, float* y) {
  int r = 0;
  for (; r + 3 <= rows; r += 3) {
    TileIntoY<3, T>(wbuf + r * kChunk, x, in_dim, k0, n, t0, r0 + r, out_dim, y);
  }
  if (rows - r == 2) TileIntoY<2, T>(wbuf + r * kChunk, x, in_dim, k0, n, t0, r0 + r, out_dim, y);
  if (rows - r == 1) TileIntoY<1, T>(wbuf + r * kChunk, x, in_dim, k0, n, t0, r0 + r, out_dim, y);
}

// Decode (one token): R rows dequantized unit by unit straight into registers, no buffer. The
// same FMAs in the same order as the chunked path.
template <typename Dequant, int R>
void DecodeTile(const uint8_t* w, size_t row_bytes, const float* x, int in_dim, int r0, float* y) {
  constexpr int kVecs = Dequant::kUnitVecs;
  constexpr int kUnit = 8 * kVecs;  // elements per unit
  float total[R] = {};
  for (int k0 = 0; k0 < in_dim; k0 += kChunk) {
    const int end = std::min(in_dim, k0 + kChunk);
    __m256 acc[R];
    for (int r = 0; r < R; r++) acc[r] = _mm256_setzero_ps();
    for (int u = k0 / kUnit; u < end / kUnit; u++) {
      __m256 xv[kVecs];
      for (int v = 0; v < kVecs; v++) xv[v] = _mm256_loadu_ps(x + kUnit * u + 8 * v);
      for (int r = 0; r < R; r++) {
        __m256 wv[kVecs];
        Dequant::Unit(w + static_cast<size_t>(r0 + r) * row_bytes, u, wv);
        for (int v = 0; v < kVecs; v++) acc[r] = _mm256_fmadd_ps(wv[v], xv[v], acc[r]);
      }
    }
    for (int r = 0; r < R; r++) {
      const float s = Fold(acc[r]);
      total[r] = k0 == 0 ? s : total[r] + s;
    }
  }
  for (int r = 0; r < R; r++) y[r0 + r] = total[r];
}

template <typename Dequant>
void Decode(const uint8_t* w, size_t row_bytes, const float* x, int in_dim, RowRange rows,
            float* y) {
  int r = rows.begin;
  for (; r + 4 <= rows.end; r += 4) DecodeTile<Dequant, 4>(w, row_bytes, x, in_dim, r, y);
  for (; r < rows.end; r++) DecodeTile<Dequant, 1>(w, row_bytes, x, in_dim, r, y);
}

template <typename Dequant>
void MatmulChunked(const void* w, const void* x_in, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows) {
  const auto* weights = static_cast<const uint8_t*>(w);
  const auto* x = static_cast<const float*>(x_in);
  const size_t row_bytes = Dequant::RowBytes(in_dim);
  if constexpr (Dequant::kUnitVecs > 0) {
    if (n_tokens == 1 && in_dim % (8 * Dequant::kUnitVecs) == 0) {
      Decode<Dequant>(weights, row_bytes, x, in_dim, rows, y);
      return;
    }
  }
  alignas(32) float wbuf[kRowBlock * kChunk];  // [kRowBlock, kChunk] dequantized weights
  for (int r0 = rows.begin; r0 < rows.end; r0 += kRowBlock) {
    const int nr = std::min(kRowBlock, rows.end - r0);
    for (int k0 = 0; k0 < in_dim; k0 += kChunk) {
      const int n = std::min(kChunk, in_dim - k0);
      for (int r = 0; r < nr; r++) {
        Dequant::Chunk(weights + static_cast<size_t>(r0 + r) * row_bytes, k0, n, wbuf + r * kChunk);
      }
      int t = 0;
      for (; t + 3 <= n_tokens; t += 3) RowsIntoY<3>(nr, wbuf, x, in_dim, k0, n, t, r0, out_dim, y);
      if (n_tokens - t == 2) RowsIntoY<2>(nr, wbuf, x, in_dim, k0, n, t, r0, out_dim, y);
      if (n_tokens - t == 1) RowsIntoY<1>(nr, wbuf, x, in_dim, k0, n, t, r0, out_dim, y);
    }
  }
}

}  // namespace

void MatmulF32Avx2(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows) {
  MatmulChunked<F32Chunk>(w, x, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulF16Avx2(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows) {
  MatmulChunked<F16Chunk>(w, x, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulBf16Avx2(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                    RowRange rows) {
  MatmulChunked<Bf16Chunk>(w, x, y, n_tokens, in_dim, out_dim, rows);
}

}  // namespace smallmind::kernels::avx2
