#include "kernels/ref/attention_ref.h"

#include <cmath>
#include <cstdint>

#include "kernels/quant_blocks.h"
#include "kernels/ref/softmax_ref.h"

namespace smallmind::kernels {
namespace {

// Element i of the cache row `offset` elements after `base`, as float.
float At(const void* base, KvType type, int64_t offset, int i) {
  if (type == KvType::kF16) return Fp16ToFp32(static_cast<const uint16_t*>(base)[offset + i]);
  return static_cast<const float*>(base)[offset + i];
}

}  // namespace

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
