// AVX2 causal attention over the paged KV cache. A pass takes the query heads of one token inside
// the row range (up to kAttentionHeadsPerPass of them, whatever KV heads they read) and walks the
// token's positions once, a few rows of a cache block at a time: each chunk of K rows is scored
// for every head of the pass before the next chunk, then each chunk of V rows is summed likewise.
// Rows are so read in address order, whole, and a decode step streams each sequence's K/V instead
// of walking it once per head. The arithmetic of every (token, head) row is the same whichever
// heads share its pass (the order is stated in avx2_kernels.h), so the split of rows among
// threads never changes a bit.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/avx2/avx2_kernels.h"
#include "kernels/avx2/avx2_util.h"
#include "kernels/ref/attention_ref.h"

namespace smallmind::kernels::avx2 {
namespace {

constexpr int kPass = kAttentionHeadsPerPass;
constexpr int kMaxHeadDim = 256;  // larger heads take the reference kernel
constexpr int kLanes = 8;         // positions whose dots one fold finishes at once

// Lane j of the result = Fold(acc[j]) for j < 8: the 8 folds at once, in Fold's exact order
// ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)).
inline __m256 FoldEight(const __m256* acc) {
  const __m256 ab = _mm256_hadd_ps(acc[0], acc[1]);  // pairs of acc 0, 1 (per 128-bit half)
  const __m256 cd = _mm256_hadd_ps(acc[2], acc[3]);
  const __m256 ef = _mm256_hadd_ps(acc[4], acc[5]);
  const __m256 gh = _mm256_hadd_ps(acc[6], acc[7]);
  const __m256 abcd = _mm256_hadd_ps(ab, cd);  // [a_lo, b_lo, c_lo, d_lo | a_hi, b_hi, ...]
  const __m256 efgh = _mm256_hadd_ps(ef, gh);
  const __m256 lo = _mm256_permute2f128_ps(abcd, efgh, 0x20);  // [a..d lo | e..h lo]
  const __m256 hi = _mm256_permute2f128_ps(abcd, efgh, 0x31);  // [a..d hi | e..h hi]
  return _mm256_add_ps(lo, hi);
}

// One pass: n query heads of one token, head g at q + g * head_dim reading the K/V slice at
// kv_offset[g] of every row.
struct Pass {
  const float* q;  // [n, head_dim]
  int kv_offset[kPass];
  int n;
  int head_dim;
  int last;  // the token's position: it attends to 0..last
};

// The dots of one query head q with the kN K rows k, k + row_stride, ... (kN <= 8): lane j of the
// result = Fold of position j's 8-lane FMA chain over head_dim (a partial last group
// zero-padded), divided by scale. One q load serves kN rows, and the kN chains interleave.
template <int kN>
inline __m256 ChunkDots(const float* q, const float* k, int64_t row_stride, int full, int tail,
                        __m256 scale8) {
  __m256 acc[kLanes];
  for (int j = 0; j < kLanes; j++) acc[j] = _mm256_setzero_ps();
  for (int i = 0; i < full; i += 8) {
    const __m256 q8 = _mm256_loadu_ps(q + i);
    for (int j = 0; j < kN; j++) {
      acc[j] = _mm256_fmadd_ps(q8, _mm256_loadu_ps(k + j * row_stride + i), acc[j]);
    }
  }
  if (tail > 0) {
    const __m256 q8 = LoadTail(q + full, tail);
    for (int j = 0; j < kN; j++) {
      acc[j] = _mm256_fmadd_ps(q8, LoadTail(k + j * row_stride + full, tail), acc[j]);
    }
  }
  return _mm256_div_ps(FoldEight(acc), scale8);
}

// scores[g * stride + p] = (q_g . k_p[kv_offset[g] ..]) / scale for the pass's heads g and
// positions p <= last. Positions go in chunks of 8 rows of one cache block, and each chunk is
// scored for every head of the pass before the next: the rows are read in address order, whole,
// while a head's 8 dots still share each q load. A chunk of fewer rows (a block's or the
// context's end) takes one row at a time.
void PassScores(const KvView& kv, const Pass& pass, float scale, float* scores, int64_t stride) {
  const int full = pass.head_dim & ~7;
  const int tail = pass.head_dim - full;
  const __m256 scale8 = _mm256_set1_ps(scale);
  for (int p0 = 0; p0 <= pass.last; p0 += kv.block_size) {
    const float* block = kv.k + kv.block_table[p0 / kv.block_size] * kv.block_stride;
    const int end = std::min(p0 + kv.block_size - 1, pass.last);
    int p = p0;
    for (; p + kLanes - 1 <= end; p += kLanes) {
      const float* k = block + (p - p0) * kv.row_stride;
      for (int g = 0; g < pass.n; g++) {
        _mm256_storeu_ps(scores + g * stride + p,
                         ChunkDots<kLanes>(pass.q + g * pass.head_dim, k + pass.kv_offset[g],
                                           kv.row_stride, full, tail, scale8));
      }
    }
    for (; p <= end; p++) {
      const float* k = block + (p - p0) * kv.row_stride;
      for (int g = 0; g < pass.n; g++) {
        scores[g * stride + p] = _mm256_cvtss_f32(ChunkDots<1>(
            pass.q + g * pass.head_dim, k + pass.kv_offset[g], kv.row_stride, full, tail, scale8));
      }
    }
  }
}

// Positions per V chunk: the rows of one chunk are summed for every head of the pass before the
// next chunk (address order, as the scores), each head's sum in registers across the chunk.
constexpr int kValueChunk = 16;

// o[0 .. width) (+)= sum over p in [p0, p1], in order, of a[p] * v_p[0 .. width), rows v_p =
// rows + (p - p0) * row_stride, width <= 64 (kWidth when it is a compile-time 64, so the 8
// accumulators stay in registers). `first`: o holds nothing yet (the sum starts from zero).
template <int kWidth>
inline void ValueChunk(const float* rows, int64_t row_stride, const float* a, int p0, int p1,
                       int width, bool first, float* o) {
  constexpr int kVecs = kWidth == 64 ? 8 : 0;
  const int vecs = kWidth == 64 ? kVecs : (width + 7) / 8;
  __m256 acc[8];
  for (int v = 0; v < 8; v++) acc[v] = _mm256_setzero_ps();
  if (!first) {
    for (int v = 0; v < vecs; v++) acc[v] = LoadTail(o + 8 * v, std::min(8, width - 8 * v));
  }
  for (int p = p0; p <= p1; p++) {
    const float* row = rows + (p - p0) * row_stride;
    const __m256 w = _mm256_set1_ps(a[p]);
    if constexpr (kWidth == 64) {
      for (int v = 0; v < kVecs; v++)
        acc[v] = _mm256_fmadd_ps(w, _mm256_loadu_ps(row + 8 * v), acc[v]);
    } else {
      for (int v = 0; v < vecs; v++) {
        acc[v] = _mm256_fmadd_ps(w, LoadTail(row + 8 * v, std::min(8, width - 8 * v)), acc[v]);
      }
    }
  }
  for (int v = 0; v < vecs; v++) StoreTail(o + 8 * v, std::min(8, width - 8 * v), acc[v]);
}

// out_g[0 .. head_dim) = sum over p <= last, in order, of att_g[p] * v_p[kv_offset[g] ..] for
// every head g of the pass, 64 dims at a time; a partial sum crosses chunks through out_g, which
// keeps every element's order (and bits) those of one sequential sum.
void PassValues(const KvView& kv, const Pass& pass, const float* att, int64_t att_stride,
                float* out) {
  const int hd = pass.head_dim;
  for (int b0 = 0; b0 <= pass.last; b0 += kv.block_size) {
    const float* block = kv.v + kv.block_table[b0 / kv.block_size] * kv.block_stride;
    const int block_end = std::min(b0 + kv.block_size - 1, pass.last);
    for (int p0 = b0; p0 <= block_end; p0 += kValueChunk) {
      const int p1 = std::min(block_end, p0 + kValueChunk - 1);
      const float* rows = block + (p0 - b0) * kv.row_stride;
      for (int g = 0; g < pass.n; g++) {
        for (int d0 = 0; d0 < hd; d0 += 64) {
          const float* v = rows + pass.kv_offset[g] + d0;
          float* o = out + g * hd + d0;
          if (hd - d0 >= 64) {
            ValueChunk<64>(v, kv.row_stride, att + g * att_stride, p0, p1, 64, p0 == 0, o);
          } else {
            ValueChunk<0>(v, kv.row_stride, att + g * att_stride, p0, p1, hd - d0, p0 == 0, o);
          }
        }
      }
    }
  }
}

}  // namespace

void AttentionAvx2(const AttentionArgs& a, RowRange rows) {
  if (a.head_dim > kMaxHeadDim) return AttentionRef(a, rows);
  const int q_dim = a.n_heads * a.head_dim;
  const int kv_group = a.n_heads / a.n_kv_heads;  // query heads sharing one KV head
  const float scale = std::sqrt(static_cast<float>(a.head_dim));
  const int64_t stride = a.start_pos + a.n_tokens;  // floats per row of the scores scratch
  for (int r = rows.begin; r < rows.end;) {
    const int t = r / a.n_heads;
    const int h = r % a.n_heads;
    // This pass: heads h.. of token t inside the range, at most kPass of them.
    Pass pass;
    pass.n = std::min({kPass, a.n_heads - h, rows.end - r});
    pass.head_dim = a.head_dim;
    pass.last = a.start_pos + t;
    pass.q = a.q + static_cast<int64_t>(t) * q_dim + h * a.head_dim;  // [n, head_dim]
    for (int g = 0; g < pass.n; g++) pass.kv_offset[g] = (h + g) / kv_group * a.head_dim;
    PassScores(a.kv, pass, scale, a.scores, stride);
    for (int g = 0; g < pass.n; g++) {
      SoftmaxAvx2(a.scores + g * stride, pass.last + 1, RowRange{0, 1});
    }
    float* out = a.out + static_cast<int64_t>(t) * q_dim + h * a.head_dim;  // [n, head_dim]
    PassValues(a.kv, pass, a.scores, stride, out);
    r += pass.n;
  }
}

}  // namespace smallmind::kernels::avx2
