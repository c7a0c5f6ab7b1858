// AVX2 causal attention over the paged KV cache. The query heads of one token that share a KV head
// (up to kAttentionHeadsPerPass of them) are scored in one pass over the K rows, each K row loaded
// once; then each head's softmax and its V sum. The arithmetic of every (token, head) row is the
// same whichever heads share its pass (the order is stated in avx2_kernels.h), so the split of
// rows among threads never changes a bit.
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

// Calls f(p, row) for positions 0..last with the cache row of p (K or V base `base`), walking
// the block table one block at a time.
template <typename F>
inline void ForPositions(const KvView& kv, const float* base, int last, F&& f) {
  for (int p0 = 0; p0 <= last; p0 += kv.block_size) {
    const float* block = base + kv.block_table[p0 / kv.block_size] * kv.block_stride;
    const int end = std::min(p0 + kv.block_size - 1, last);
    for (int p = p0; p <= end; p++) f(p, block + (p - p0) * kv.row_stride);
  }
}

// Lane h of the result = Fold(acc[h]) for h < 8: the 8 folds at once, in Fold's exact order
// ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)).
inline __m256 FoldEight(const __m256* acc) {
  const __m256 ab = _mm256_hadd_ps(acc[0], acc[1]);  // pairs of heads 0, 1 (per 128-bit half)
  const __m256 cd = _mm256_hadd_ps(acc[2], acc[3]);
  const __m256 ef = _mm256_hadd_ps(acc[4], acc[5]);
  const __m256 gh = _mm256_hadd_ps(acc[6], acc[7]);
  const __m256 abcd = _mm256_hadd_ps(ab, cd);  // [a_lo, b_lo, c_lo, d_lo | a_hi, b_hi, ...]
  const __m256 efgh = _mm256_hadd_ps(ef, gh);
  const __m256 lo = _mm256_permute2f128_ps(abcd, efgh, 0x20);  // [a..d lo | e..h lo]
  const __m256 hi = _mm256_permute2f128_ps(abcd, efgh, 0x31);  // [a..d hi | e..h hi]
  return _mm256_add_ps(lo, hi);
}

// scores[g][p] = (q_g . k_p) / scale for the N heads q[0..N) (head_dim apart) and every position
// p <= last. Each dot: 8 lanes of FMA over head_dim (a partial last group zero-padded), folded as
// Fold; N is a template argument so the accumulators stay in registers.
template <int N>
void Scores(const KvView& kv, int kv_offset, const float* q_in, int head_dim, int last, float scale,
            float* scores, int64_t stride) {
  const int full = head_dim & ~7;
  const int tail = head_dim - full;
  const __m256 scale8 = _mm256_set1_ps(scale);
  // The N query rows at a fixed stride, so the inner loop addresses them from one register.
  alignas(32) float q[N * kMaxHeadDim];
  for (int g = 0; g < N; g++) {
    std::copy(q_in + g * head_dim, q_in + (g + 1) * head_dim, q + g * kMaxHeadDim);
  }
  ForPositions(kv, kv.k + kv_offset, last, [&](int p, const float* k) {
    __m256 acc[kPass];
    for (int g = 0; g < kPass; g++) acc[g] = _mm256_setzero_ps();
    for (int i = 0; i < full; i += 8) {
      const __m256 k8 = _mm256_loadu_ps(k + i);
      for (int g = 0; g < N; g++) {
        acc[g] = _mm256_fmadd_ps(_mm256_load_ps(q + g * kMaxHeadDim + i), k8, acc[g]);
      }
    }
    if (tail > 0) {
      const __m256 k8 = LoadTail(k + full, tail);
      for (int g = 0; g < N; g++) {
        acc[g] = _mm256_fmadd_ps(LoadTail(q + g * kMaxHeadDim + full, tail), k8, acc[g]);
      }
    }
    // One division for all heads: each lane rounds exactly as dot / scale would.
    alignas(32) float dots[kPass];
    _mm256_store_ps(dots, _mm256_div_ps(FoldEight(acc), scale8));
    for (int g = 0; g < N; g++) scores[g * stride + p] = dots[g];
  });
}

// The dots of one query head q with the kN K rows k, k + row_stride, ... (kN <= 8): lane j of the
// result = Fold of position j's 8-lane FMA chain over head_dim, divided by scale.
template <int kN>
inline __m256 ChunkDots(const float* q, const float* k, int64_t row_stride, int full, int tail,
                        __m256 scale8) {
  __m256 acc[8];
  for (int j = 0; j < 8; j++) acc[j] = _mm256_setzero_ps();
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

// Scores<1> eight positions at a time: one query head (no KV sharing) would otherwise run one
// 8-lane FMA chain per position, latency-bound. Each position's dot is still the same FMA sequence
// over head_dim and the same Fold, so the bits equal Scores<1>'s.
void ScoresOneHead(const KvView& kv, int kv_offset, const float* q, int head_dim, int last,
                   float scale, float* scores) {
  const int full = head_dim & ~7;
  const int tail = head_dim - full;
  const __m256 scale8 = _mm256_set1_ps(scale);
  const float* base = kv.k + kv_offset;
  for (int p0 = 0; p0 <= last; p0 += kv.block_size) {
    const float* block = base + kv.block_table[p0 / kv.block_size] * kv.block_stride;
    const int end = std::min(p0 + kv.block_size - 1, last);
    int p = p0;
    for (; p + 7 <= end; p += 8) {
      const float* k = block + (p - p0) * kv.row_stride;
      _mm256_storeu_ps(scores + p, ChunkDots<8>(q, k, kv.row_stride, full, tail, scale8));
    }
    for (; p <= end; p++) {
      const float* k = block + (p - p0) * kv.row_stride;
      scores[p] = _mm256_cvtss_f32(ChunkDots<1>(q, k, kv.row_stride, full, tail, scale8));
    }
  }
}

void ScoresOfHeads(int n_q, const KvView& kv, int kv_offset, const float* q, int head_dim, int last,
                   float scale, float* scores, int64_t stride) {
  switch (n_q) {
    case 1: return ScoresOneHead(kv, kv_offset, q, head_dim, last, scale, scores);
    case 2: return Scores<2>(kv, kv_offset, q, head_dim, last, scale, scores, stride);
    case 3: return Scores<3>(kv, kv_offset, q, head_dim, last, scale, scores, stride);
    case 4: return Scores<4>(kv, kv_offset, q, head_dim, last, scale, scores, stride);
    case 5: return Scores<5>(kv, kv_offset, q, head_dim, last, scale, scores, stride);
    case 6: return Scores<6>(kv, kv_offset, q, head_dim, last, scale, scores, stride);
    case 7: return Scores<7>(kv, kv_offset, q, head_dim, last, scale, scores, stride);
    default: return Scores<8>(kv, kv_offset, q, head_dim, last, scale, scores, stride);
  }
}

// Positions per V pass: 64 rows of one head's V slice (16 KiB at head_dim 64) stay in L1 while
// every head of the pass reads them.
constexpr int kValueBlock = 64;

// o[0 .. width) (+)= sum over p in [p0, p1], in order, of a[p] * v_p[0 .. width), width <= 64
// (kWidth when it is a compile-time 64, so the 8 accumulators stay in registers).
template <int kWidth>
inline void ValueBlock(const KvView& kv, const float* v_base, const float* a, int p0, int p1,
                       int width, float* o) {
  constexpr int kVecs = kWidth == 64 ? 8 : 0;
  const int vecs = kWidth == 64 ? kVecs : (width + 7) / 8;
  __m256 acc[8];
  for (int v = 0; v < 8; v++) acc[v] = _mm256_setzero_ps();
  if (p0 > 0) {
    for (int v = 0; v < vecs; v++) acc[v] = LoadTail(o + 8 * v, std::min(8, width - 8 * v));
  }
  int block = p0 / kv.block_size, slot = p0 % kv.block_size;  // walked without dividing
  for (int p = p0; p <= p1; p++, slot++) {
    if (slot == kv.block_size) {
      slot = 0;
      block++;
    }
    const float* row = v_base + kv.block_table[block] * kv.block_stride + slot * kv.row_stride;
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

// For g < n_q: out_g[0 .. n) = sum over p <= last, in order, of att_g[p] * v_p[0 .. n), 64
// dims at a time; a partial sum crosses position blocks through out_g, which keeps every
// element's order (and bits) those of one sequential sum.
void WeightedValues(const KvView& kv, int kv_offset, const float* att, int64_t att_stride, int n_q,
                    int last, int n, float* out, int64_t out_stride) {
  for (int p0 = 0; p0 <= last; p0 += kValueBlock) {
    const int p1 = std::min(last, p0 + kValueBlock - 1);
    for (int g = 0; g < n_q; g++) {
      for (int d0 = 0; d0 < n; d0 += 64) {
        const float* v_base = kv.v + kv_offset + d0;
        float* o = out + g * out_stride + d0;
        if (n - d0 >= 64) {
          ValueBlock<64>(kv, v_base, att + g * att_stride, p0, p1, 64, o);
        } else {
          ValueBlock<0>(kv, v_base, att + g * att_stride, p0, p1, n - d0, o);
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
    const int kv_head = h / kv_group;
    // This pass: heads h.. that share kv_head, inside the range, at most kPass of them.
    const int n_q = std::min({kPass, (kv_head + 1) * kv_group - h, rows.end - r});
    const int pos = a.start_pos + t;
    const int kv_offset = kv_head * a.head_dim;  // this KV head's slice of a K/V row
    const float* q = a.q + static_cast<int64_t>(t) * q_dim + h * a.head_dim;  // [n_q, head_dim]
    ScoresOfHeads(n_q, a.kv, kv_offset, q, a.head_dim, pos, scale, a.scores, stride);
    for (int g = 0; g < n_q; g++) SoftmaxAvx2(a.scores + g * stride, pos + 1, RowRange{0, 1});
    float* out = a.out + static_cast<int64_t>(t) * q_dim + h * a.head_dim;  // [n_q, head_dim]
    WeightedValues(a.kv, kv_offset, a.scores, stride, n_q, pos, a.head_dim, out, a.head_dim);
    r += n_q;
  }
}

}  // namespace smallmind::kernels::avx2
