#include "kernels/ref/attention_ref.h"

#include <cmath>
#include <cstdint>

#include "kernels/q8_act.h"
#include "kernels/quant_blocks.h"
#include "kernels/ref/quantize_ref.h"
#include "kernels/ref/softmax_ref.h"

namespace smallmind::kernels {
namespace {

// Element i of the cache row `offset` elements after `base`, as float.
float At(const void* base, KvType type, int64_t offset, int i) {
  if (type == KvType::kF16) return Fp16ToFp32(static_cast<const uint16_t*>(base)[offset + i]);
  return static_cast<const float*>(base)[offset + i];
}

// kQ8: the float scale number `block` of the row `row` bytes after `base` (K or V), whose scales
// start `scales_offset` bytes after its quants.
float Q8Scale(const void* base, int64_t row, int64_t scales_offset, int block) {
  return reinterpret_cast<const float*>(static_cast<const int8_t*>(base) + row +
                                        scales_offset)[block];
}

// The query head a row scores with: its floats and, for a kQ8 cache, its quants and scales
// (F32ToQ8Ref).
struct Query {
  const float* q;  // [head_dim]
  int8_t qs[kKvQ8HeadDimMax];
  float d[kKvQ8HeadDimMax / kKvQ8Block];
};

// q . (the head's slice at kv_offset of the K row `row` elements after a.kv.k): left to right in
// one float; kQ8: per block j in order score = fma(isum_j, dq_j * dk_j, score), isum_j the exact
// integer dot of the quants.
float Score(const AttentionArgs& a, const Query& q, int64_t row, int kv_offset) {
  float score = 0.0f;
  if (a.kv.type != KvType::kQ8) {
    for (int i = 0; i < a.head_dim; i++)
      score += q.q[i] * At(a.kv.k, a.kv.type, row + kv_offset, i);
    return score;
  }
  const int8_t* k = static_cast<const int8_t*>(a.kv.k) + row + kv_offset;
  for (int j = 0; j < a.head_dim / kKvQ8Block; j++) {
    int isum = 0;
    for (int i = kKvQ8Block * j; i < kKvQ8Block * (j + 1); i++) isum += q.qs[i] * k[i];
    const float d = q.d[j] * Q8Scale(a.kv.k, row, a.kv.scales_offset, kv_offset / kKvQ8Block + j);
    score = std::fma(static_cast<float>(isum), d, score);
  }
  return score;
}

// out[i] += w * the head's slice at kv_offset of the V row `row` elements after a.kv.v; kQ8:
// out[i] = fma(w * dv_j, v_q[i], out[i]).
void AddValue(const AttentionArgs& a, float w, int64_t row, int kv_offset, float* out) {
  if (a.kv.type != KvType::kQ8) {
    for (int i = 0; i < a.head_dim; i++) out[i] += w * At(a.kv.v, a.kv.type, row + kv_offset, i);
    return;
  }
  const int8_t* v = static_cast<const int8_t*>(a.kv.v) + row + kv_offset;
  for (int j = 0; j < a.head_dim / kKvQ8Block; j++) {
    const float wj = w * Q8Scale(a.kv.v, row, a.kv.scales_offset, kv_offset / kKvQ8Block + j);
    for (int i = kKvQ8Block * j; i < kKvQ8Block * (j + 1); i++) {
      out[i] = std::fma(wj, static_cast<float>(v[i]), out[i]);
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

void SoftCapRef(float* scores, int n, float cap) {
  for (int i = 0; i < n; i++) scores[i] = cap * std::tanh(scores[i] / cap);
}

void SoftmaxWithSinkRef(float* scores, int n, float sink) {
  float max_val = sink;
  for (int i = 0; i < n; i++) max_val = scores[i] > max_val ? scores[i] : max_val;
  float sum = 0.0f;
  for (int i = 0; i < n; i++) {
    scores[i] = std::exp(scores[i] - max_val);
    sum += scores[i];
  }
  sum += std::exp(sink - max_val);
  for (int i = 0; i < n; i++) scores[i] /= sum;
}

void AddSinkToSoftmax(float* probs, int n, int argmax, float score_max, float sink) {
  const float inv_sum = probs[argmax];  // exp(0) / S
  const float f = 1.0f / (1.0f + std::exp(sink - score_max) * inv_sum);
  for (int i = 0; i < n; i++) probs[i] *= f;
}

void F32ToF16Ref(const float* x, uint16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = Fp32ToFp16(x[i]);
}

void AttentionRef(const AttentionArgs& a, RowRange rows) {
  const int64_t q_dim = a.QStride();
  const int kv_group = a.n_heads / a.n_kv_heads;  // query heads sharing one KV head
  const float scale = a.ScoreDivisor();
  for (int r = rows.begin; r < rows.end; r++) {
    const int t = r / a.n_heads;
    const int h = r % a.n_heads;
    const int pos = a.start_pos + t;
    const int kv_offset = (h / kv_group) * a.head_dim;  // this head's slice of a K/V row
    Query q;
    q.q = a.q + t * q_dim + h * a.head_dim;
    if (a.kv.type == KvType::kQ8) F32ToQ8Ref(q.q, q.qs, q.d, a.head_dim);
    const int first = a.FirstPos(pos);
    float* att = a.scores;  // [pos + 1]: att[p] for the positions first..pos this token sees

    // Scores of every position of the window up to and including this token's own.
    for (int p = first; p <= pos; p++) att[p] = Score(a, q, a.kv.Offset(p), kv_offset) / scale;
    if (a.softcap > 0) SoftCapRef(att + first, pos + 1 - first, a.softcap);
    if (a.sinks != nullptr) {
      SoftmaxWithSinkRef(att + first, pos + 1 - first, a.sinks[h]);
    } else {
      SoftmaxRef(att + first, pos + 1 - first, AllRows(1));
    }

    // Weighted sum of the values, from the window's first position.
    float* out = a.out + t * q_dim + h * a.head_dim;  // [head_dim]
    for (int i = 0; i < a.head_dim; i++) out[i] = 0.0f;
    for (int p = first; p <= pos; p++) AddValue(a, att[p], a.kv.Offset(p), kv_offset, out);
  }
}

}  // namespace smallmind::kernels
