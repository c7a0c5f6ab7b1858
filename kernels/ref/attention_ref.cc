#include "kernels/ref/attention_ref.h"

#include <cmath>
#include <cstdint>

#include "kernels/q8_act.h"
#include "kernels/quant_blocks.h"
#include "kernels/ref/q8_act_ref.h"
#include "kernels/ref/softmax_ref.h"

namespace smallmind::kernels {
namespace {

// Element i of the cache row `offset` elements after `base`, as float.
float At(const void* base, KvType type, int64_t offset, int i) {
  if (type == KvType::kF16) return Fp16ToFp32(static_cast<const uint16_t*>(base)[offset + i]);
  return static_cast<const float*>(base)[offset + i];
}

// kQ8: the quants and the scale of block j of the row `offset` bytes after `base` (K or V), with
// the row's scales `scales_offset` bytes after its quants.
const int8_t* Q8Quants(const void* base, int64_t offset) {
  return static_cast<const int8_t*>(base) + offset;
}
float Q8Scale(const void* base, int64_t row, int64_t scales_offset, int block) {
  return reinterpret_cast<const float*>(static_cast<const int8_t*>(base) + row +
                                        scales_offset)[block];
}

// Row r of a kQ8 cache: scores are sums over the head's blocks j, in order, of
// fma(isum_j, dq_j * dk_j, s) with isum_j the exact integer dot of the quantized q and the cached
// quants, divided by sqrt(head_dim); out[i] = sum over positions in order of
// fma(att[p] * dv_j, v_q[i], out[i]).
void AttendRowQ8(const AttentionArgs& a, int t, int h, float scale) {
  const int q_dim = a.n_heads * a.head_dim;
  const int kv_group = a.n_heads / a.n_kv_heads;
  const int pos = a.start_pos + t;
  const int kv_offset = (h / kv_group) * a.head_dim;  // bytes into a row's quants
  const int first_block = kv_offset / kKvQ8Block;     // this head's first scale
  const int n_blocks = a.head_dim / kKvQ8Block;
  const float* q = a.q + static_cast<int64_t>(t) * q_dim + h * a.head_dim;
  int8_t qq[kKvQ8HeadDimMax];
  float dq[kKvQ8HeadDimMax / kKvQ8Block];
  F32ToQ8Ref(q, qq, dq, a.head_dim);
  float* att = a.scores;
  for (int p = 0; p <= pos; p++) {
    const int64_t row = a.kv.Offset(p);
    const int8_t* k = Q8Quants(a.kv.k, row + kv_offset);
    float score = 0.0f;
    for (int j = 0; j < n_blocks; j++) {
      int isum = 0;
      for (int i = 0; i < kKvQ8Block; i++) isum += qq[kKvQ8Block * j + i] * k[kKvQ8Block * j + i];
      const float d = dq[j] * Q8Scale(a.kv.k, row, a.kv.scales_offset, first_block + j);
      score = std::fma(static_cast<float>(isum), d, score);
    }
    att[p] = score / scale;
  }
  SoftmaxRef(att, pos + 1, AllRows(1));
  float* out = a.out + static_cast<int64_t>(t) * q_dim + h * a.head_dim;
  for (int i = 0; i < a.head_dim; i++) out[i] = 0.0f;
  for (int p = 0; p <= pos; p++) {
    const int64_t row = a.kv.Offset(p);
    const int8_t* v = Q8Quants(a.kv.v, row + kv_offset);
    for (int j = 0; j < n_blocks; j++) {
      const float w = att[p] * Q8Scale(a.kv.v, row, a.kv.scales_offset, first_block + j);
      for (int i = kKvQ8Block * j; i < kKvQ8Block * (j + 1); i++) {
        out[i] = std::fma(w, static_cast<float>(v[i]), out[i]);
      }
    }
  }
}

}  // namespace

static_assert(kKvQ8Block == kQ8ActBlock, "the cache's blocks are the activations' blocks");

void F32ToQ8Ref(const float* x, int8_t* qs, float* d, int64_t n) {
  for (int64_t b = 0; b < n / kKvQ8Block; b++) {
    d[b] = QuantizeBlockQ8Ref(x + kKvQ8Block * b, qs + kKvQ8Block * b);
  }
}

void F32ToF16Ref(const float* x, uint16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = Fp32ToFp16(x[i]);
}

void AttentionRef(const AttentionArgs& a, RowRange rows) {
  const int q_dim = a.n_heads * a.head_dim;
  const int kv_group = a.n_heads / a.n_kv_heads;  // query heads sharing one KV head
  const float scale = std::sqrt(static_cast<float>(a.head_dim));
  for (int r = rows.begin; r < rows.end; r++) {
    const int t = r / a.n_heads;
    const int h = r % a.n_heads;
    if (a.kv.type == KvType::kQ8) {
      AttendRowQ8(a, t, h, scale);
      continue;
    }
    const int pos = a.start_pos + t;
    const int kv_offset = (h / kv_group) * a.head_dim;  // this head's slice of a K/V row
    const float* q = a.q + static_cast<int64_t>(t) * q_dim + h * a.head_dim;  // [head_dim]
    float* att = a.scores;                                                    // [pos + 1]

    // Scores of every position up to and including this token's own.
    for (int p = 0; p <= pos; p++) {
      const int64_t k = a.kv.Offset(p) + kv_offset;  // [head_dim] from here
      float score = 0.0f;
      for (int i = 0; i < a.head_dim; i++) score += q[i] * At(a.kv.k, a.kv.type, k, i);
      att[p] = score / scale;
    }
    SoftmaxRef(att, pos + 1, AllRows(1));

    // Weighted sum of the values.
    float* out = a.out + static_cast<int64_t>(t) * q_dim + h * a.head_dim;  // [head_dim]
    for (int i = 0; i < a.head_dim; i++) out[i] = 0.0f;
    for (int p = 0; p <= pos; p++) {
      const int64_t v = a.kv.Offset(p) + kv_offset;  // [head_dim] from here
      const float w = att[p];
      for (int i = 0; i < a.head_dim; i++) out[i] += w * At(a.kv.v, a.kv.type, v, i);
    }
  }
}

}  // namespace smallmind::kernels
