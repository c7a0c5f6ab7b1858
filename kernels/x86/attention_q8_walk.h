// The kQ8 cache's walk of the AVX2 attention kernel (attention_avx2.cc): attention_walk.h's
// walk with integer scores (the query rows quantized as cache rows, exact int32 block dots, then
// fma(float(dot), dq * dk, s) block by block) and value sums of int8 rows (fma(a * dv, float(v),
// o) position by position). Shared with the AVX-512 kQ8 kernel
// (kernels/avx512/attention_q8_avx512.cc), which takes it for tiles whose rows are each alone on
// their KV head and for the later tokens' own last positions, and keeps its arithmetic where it
// serves several rows from each cache row.
// Only for the kernels/avx2/ and kernels/avx512/ files (namespace: see x86_util.h).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/kernels.h"
#include "kernels/x86/attention_walk.h"
#include "kernels/x86/x86_util.h"

namespace smallmind::kernels::SMALLMIND_X86_NS::attention {

// Asks for the `bytes` at each of the n rows from `rows` (row_stride elements apart): the kQ8
// walk's request for the slices of the next chunk a head will read, issued while it works on this
// one. (The float and half walks ask for the rows a block ahead instead, see ForChunks; the kQ8
// walk measured slower in cache with that, 17 -> 22 us for a decode token's 12 heads at 128
// positions, and is left as it was.) Into L2, as theirs (PrefetchLine).
template <typename E>
inline void PrefetchRows(const E* rows, int n, int64_t row_stride, int bytes) {
  for (int j = 0; j < n; j++) {
    const char* row = reinterpret_cast<const char*>(rows + j * row_stride);
    for (int off = 0; off < bytes; off += 64) attention::PrefetchLine(row + off);
  }
}

// The query rows of a tile quantized as cache rows (QuantizeBlockQ8, F32ToQ8Avx2's steps): row
// (t, g)'s quants at qs[(t * n_heads + g) * head_dim], its scales at
// d[(t * n_heads + g) * head_dim / 32]. A kQ8 tile holds at most kQuants query values (fewer
// tokens for wide models).
template <int kQuants>
struct QTileQ8 {
  static_assert(kQuants >= kMaxTileHeads * kMaxHeadDim, "a tile of one token must fit");
  alignas(64) int8_t qs[kQuants];
  float d[kQuants / kKvQ8Block];
};

// The tile's query rows into qt; with `sums`, each block's quant sum too, at
// sums[(t * n_heads + g) * head_dim / 32 + b] (the quantizer adds them up in its registers).
template <int kQuants>
inline void QuantizeTileQ8(const Tile& tile, QTileQ8<kQuants>* qt, int* sums = nullptr) {
  const int n_blocks = tile.head_dim / kKvQ8Block;
  for (int t = 0; t < tile.n_tokens; t++) {
    for (int g = 0; g < tile.n_heads; g++) {
      const int row = t * tile.n_heads + g;
      const float* x = tile.q + t * tile.q_dim + g * tile.head_dim;
      for (int b = 0; b < n_blocks; b++) {
        const int i = row * n_blocks + b;
        qt->d[i] = QuantizeBlockQ8(x + kKvQ8Block * b, qt->qs + kKvQ8Block * i,
                                   sums != nullptr ? sums + i : nullptr);
      }
    }
  }
}

// Lane r = the sum of acc[r]'s 8 int32 lanes, for r < 8 (exact: the order does not matter).
inline __m256i FoldEightInt(const __m256i* acc) {
  const __m256i ab = _mm256_hadd_epi32(acc[0], acc[1]);
  const __m256i cd = _mm256_hadd_epi32(acc[2], acc[3]);
  const __m256i ef = _mm256_hadd_epi32(acc[4], acc[5]);
  const __m256i gh = _mm256_hadd_epi32(acc[6], acc[7]);
  const __m256i abcd = _mm256_hadd_epi32(ab, cd);
  const __m256i efgh = _mm256_hadd_epi32(ef, gh);
  const __m256i lo = _mm256_permute2x128_si256(abcd, efgh, 0x20);
  const __m256i hi = _mm256_permute2x128_si256(abcd, efgh, 0x31);
  return _mm256_add_epi32(lo, hi);
}

// Float scale number `block` of the kQ8 cache row whose quants start at `row`.
inline float RowScale(const int8_t* row, int64_t scales_offset, int block) {
  float d;
  std::memcpy(&d, row + scales_offset + 4 * block, 4);
  return d;
}

// The scores of one quantized head q with the kN cache rows rows, rows + row_stride, ... (kN <= 8;
// the head's quants at koff of each row, its scales from first_block): lane j = sum over blocks b
// in order of fma(isum_jb, dq_b * dk_jb, .), divided by scale.
template <int kN>
inline __m256 ChunkDotsQ8(const int8_t* qq, const float* dq, const int8_t* rows, int64_t row_stride,
                          int64_t scales_offset, int koff, int first_block, int n_blocks,
                          __m256 scale8) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 s = _mm256_setzero_ps();
  for (int b = 0; b < n_blocks; b++) {
    const __m256i qv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qq + kKvQ8Block * b));
    const __m256i qa = _mm256_abs_epi8(qv);
    __m256i acc[kLanes];
    alignas(32) float dk[kLanes] = {};
    for (int j = 0; j < kLanes; j++) {
      if (j < kN) {
        const int8_t* row = rows + j * row_stride;
        const __m256i k =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + koff + kKvQ8Block * b));
        acc[j] = _mm256_madd_epi16(_mm256_maddubs_epi16(qa, _mm256_sign_epi8(k, qv)), ones);
        dk[j] = RowScale(row, scales_offset, first_block + b);
      } else {
        acc[j] = _mm256_setzero_si256();
      }
    }
    const __m256 d = _mm256_mul_ps(_mm256_set1_ps(dq[b]), _mm256_load_ps(dk));
    s = _mm256_fmadd_ps(_mm256_cvtepi32_ps(FoldEightInt(acc)), d, s);
  }
  return _mm256_div_ps(s, scale8);
}

// TileScores for a kQ8 cache, the tile's q quantized in qt.
inline void TileScoresQ8(const KvView& kv, const Tile& tile, const int8_t* qs, const float* qd,
                         int t_lo, int t_hi, int p_lo, int p_hi, float scale) {
  const int n_blocks = tile.head_dim / kKvQ8Block;
  const __m256 scale8 = _mm256_set1_ps(scale);
  ForChunks(kv, static_cast<const int8_t*>(kv.k), 0, 0, p_lo, p_hi, kLanes,
            [&](int p, int n, const int8_t* k, const int8_t* next, const Ahead&) {
              if (next != nullptr) {  // every head's scales share the rows' tails
                PrefetchRows(next + kv.scales_offset + tile.kv_offset[0] / 8, kLanes, kv.row_stride,
                             tile.n_heads * n_blocks * 4);
              }
              for (int g = 0; g < tile.n_heads; g++) {
                if (next != nullptr) {
                  PrefetchRows(next + tile.kv_offset[g], kLanes, kv.row_stride, tile.head_dim);
                }
                const int first_block = tile.kv_offset[g] / kKvQ8Block;
                for (int t = t_lo; t < t_hi; t++) {
                  const int row = t * tile.n_heads + g;
                  const int8_t* qq = qs + row * tile.head_dim;
                  const float* dq = qd + row * n_blocks;
                  float* s = tile.scores + (t * tile.n_heads + g) * tile.stride + p;
                  if (n == kLanes) {
                    _mm256_storeu_ps(
                        s, ChunkDotsQ8<kLanes>(qq, dq, k, kv.row_stride, kv.scales_offset,
                                               tile.kv_offset[g], first_block, n_blocks, scale8));
                  } else {
                    for (int j = 0; j < n; j++) {
                      s[j] = _mm256_cvtss_f32(ChunkDotsQ8<1>(
                          qq, dq, k + j * kv.row_stride, kv.row_stride, kv.scales_offset,
                          tile.kv_offset[g], first_block, n_blocks, scale8));
                    }
                  }
                }
              }
            });
}

// ValueChunk for a kQ8 cache: o[0 .. width) (+)= sum over p in [p0, p1], in order, of
// (a[p] * dv_p,b) * v_p[i] (fma), width 32 or 64 values from koff of each row (blocks from
// first_block).
inline void ValueChunkQ8(const int8_t* rows, int64_t row_stride, int64_t scales_offset, int koff,
                         int first_block, const float* a, int p0, int p1, int width, bool first,
                         float* o) {
  const int vecs = width / 8;
  __m256 acc[8];
  for (int v = 0; v < 8; v++) acc[v] = _mm256_setzero_ps();
  if (!first) {
    for (int v = 0; v < vecs; v++) acc[v] = _mm256_loadu_ps(o + 8 * v);
  }
  for (int p = p0; p <= p1; p++) {
    const int8_t* row = rows + (p - p0) * row_stride;
    for (int b = 0; b < vecs / 4; b++) {
      const __m256 w = _mm256_set1_ps(a[p] * RowScale(row, scales_offset, first_block + b));
      for (int v = 4 * b; v < 4 * b + 4; v++) {
        const __m128i q8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + koff + 8 * v));
        acc[v] = _mm256_fmadd_ps(w, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q8)), acc[v]);
      }
    }
  }
  for (int v = 0; v < vecs; v++) _mm256_storeu_ps(o + 8 * v, acc[v]);
}

inline void TileValuesQ8(const KvView& kv, const Tile& tile, int t_lo, int t_hi, int p_lo,
                         int p_hi) {
  const int hd = tile.head_dim;
  ForChunks(kv, static_cast<const int8_t*>(kv.v), 0, 0, p_lo, p_hi, kValueChunk,
            [&](int p0, int n, const int8_t* rows, const int8_t* next, const Ahead&) {
              if (next != nullptr) {
                PrefetchRows(next + kv.scales_offset + tile.kv_offset[0] / 8, kValueChunk,
                             kv.row_stride, tile.n_heads * (hd / kKvQ8Block) * 4);
              }
              for (int g = 0; g < tile.n_heads; g++) {
                if (next != nullptr) {
                  PrefetchRows(next + tile.kv_offset[g], kValueChunk, kv.row_stride, hd);
                }
                for (int t = t_lo; t < t_hi; t++) {
                  const float* att = tile.scores + (t * tile.n_heads + g) * tile.stride;
                  float* o = tile.out + t * tile.q_dim + g * hd;
                  for (int d0 = 0; d0 < hd; d0 += 64) {
                    const int koff = tile.kv_offset[g] + d0;
                    ValueChunkQ8(rows, kv.row_stride, kv.scales_offset, koff, koff / kKvQ8Block,
                                 att, p0, p0 + n - 1, std::min(64, hd - d0), p0 == tile.lo, o + d0);
                  }
                }
              }
            });
}

// A tile over a kQ8 cache: its query heads quantized once, then the walk.
template <int kQuants>
void AttendTileQ8(const KvView& kv, const Tile& tile, float scale) {
  QTileQ8<kQuants> qt;
  QuantizeTileQ8(tile, &qt);
  WalkTile(
      tile,
      [&](int t_lo, int t_hi, int p_lo, int p_hi) {
        TileScoresQ8(kv, tile, qt.qs, qt.d, t_lo, t_hi, p_lo, p_hi, scale);
      },
      [&](int t_lo, int t_hi, int p_lo, int p_hi) {
        TileValuesQ8(kv, tile, t_lo, t_hi, p_lo, p_hi);
      });
}

}  // namespace smallmind::kernels::SMALLMIND_X86_NS::attention
