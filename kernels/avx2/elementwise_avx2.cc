// AVX2 RMSNorm, softmax, SwiGLU and adds; the orders are stated in avx2_kernels.h.
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/avx2/avx2_kernels.h"
#include "kernels/avx2/avx2_util.h"

namespace smallmind::kernels::avx2 {

void RmsNormAvx2(const float* x, const float* weight, float* out, int dim, float eps,
                 RowRange tokens) {
  const int full = dim & ~7;
  for (int t = tokens.begin; t < tokens.end; t++) {
    const float* xt = x + static_cast<int64_t>(t) * dim;  // [dim]
    float* ot = out + static_cast<int64_t>(t) * dim;      // [dim]
    __m256 acc = _mm256_setzero_ps();
    for (int j = 0; j < full; j += 8) {
      const __m256 v = _mm256_loadu_ps(xt + j);
      acc = _mm256_fmadd_ps(v, v, acc);
    }
    if (full < dim) {
      const __m256 v = LoadTail(xt + full, dim - full);
      acc = _mm256_fmadd_ps(v, v, acc);
    }
    const float inv = 1.0f / std::sqrt(Fold(acc) / static_cast<float>(dim) + eps);
    const __m256 scale = _mm256_set1_ps(inv);
    for (int j = 0; j < full; j += 8) {
      const __m256 v = _mm256_mul_ps(scale, _mm256_loadu_ps(xt + j));
      _mm256_storeu_ps(ot + j, _mm256_mul_ps(_mm256_loadu_ps(weight + j), v));
    }
    for (int j = full; j < dim; j++) ot[j] = weight[j] * (inv * xt[j]);
  }
}

void SoftmaxAvx2(float* x, int row_len, RowRange rows) {
  const int full = row_len & ~7;
  for (int r = rows.begin; r < rows.end; r++) {
    float* row = x + static_cast<int64_t>(r) * row_len;  // [row_len]
    float max_val = row[0];                              // subtracted for numerical stability
    __m256 vmax = _mm256_set1_ps(max_val);
    for (int i = 0; i < full; i += 8) vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(row + i));
    for (int i = full; i < row_len; i++) max_val = row[i] > max_val ? row[i] : max_val;
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, vmax);
    for (float l : lanes) max_val = l > max_val ? l : max_val;

    const __m256 m = _mm256_set1_ps(max_val);
    __m256 sum = _mm256_setzero_ps();
    for (int i = 0; i < full; i += 8) {
      const __m256 e = Exp(_mm256_sub_ps(_mm256_loadu_ps(row + i), m));
      _mm256_storeu_ps(row + i, e);
      sum = _mm256_add_ps(sum, e);
    }
    if (full < row_len) {  // the tail's exps in lanes 0..n-1, zeros elsewhere
      const int n = row_len - full;
      const __m256 e = _mm256_and_ps(Exp(_mm256_sub_ps(LoadTail(row + full, n), m)),
                                     _mm256_castsi256_ps(TailMask(n)));
      StoreTail(row + full, n, e);
      sum = _mm256_add_ps(sum, e);
    }
    const __m256 total = _mm256_set1_ps(Fold(sum));
    for (int i = 0; i < full; i += 8) {
      _mm256_storeu_ps(row + i, _mm256_div_ps(_mm256_loadu_ps(row + i), total));
    }
    if (full < row_len) {
      const int n = row_len - full;
      StoreTail(row + full, n, _mm256_div_ps(LoadTail(row + full, n), total));
    }
  }
}

void SwiGluAvx2(float* gate, const float* up, int hidden, RowRange tokens) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const int full = hidden & ~7;
  for (int t = tokens.begin; t < tokens.end; t++) {
    float* g = gate + static_cast<int64_t>(t) * hidden;      // [hidden]
    const float* u = up + static_cast<int64_t>(t) * hidden;  // [hidden]
    for (int i = 0; i < hidden; i += 8) {
      const int n = i < full ? 8 : hidden - i;
      const __m256 gv = n == 8 ? _mm256_loadu_ps(g + i) : LoadTail(g + i, n);
      const __m256 uv = n == 8 ? _mm256_loadu_ps(u + i) : LoadTail(u + i, n);
      const __m256 silu = _mm256_div_ps(gv, _mm256_add_ps(one, Exp(_mm256_xor_ps(gv, sign))));
      const __m256 out = _mm256_mul_ps(silu, uv);
      if (n == 8) {
        _mm256_storeu_ps(g + i, out);
      } else {
        StoreTail(g + i, n, out);
      }
    }
  }
}

void AddAvx2(float* x, const float* delta, int dim, RowRange tokens) {
  const int full = dim & ~7;
  for (int t = tokens.begin; t < tokens.end; t++) {
    float* xt = x + static_cast<int64_t>(t) * dim;            // [dim]
    const float* dt = delta + static_cast<int64_t>(t) * dim;  // [dim]
    for (int i = 0; i < full; i += 8) {
      _mm256_storeu_ps(xt + i, _mm256_add_ps(_mm256_loadu_ps(xt + i), _mm256_loadu_ps(dt + i)));
    }
    for (int i = full; i < dim; i++) xt[i] += dt[i];
  }
}

void AddBiasAvx2(float* x, const float* bias, int dim, RowRange tokens) {
  const int full = dim & ~7;
  for (int t = tokens.begin; t < tokens.end; t++) {
    float* xt = x + static_cast<int64_t>(t) * dim;  // [dim]
    for (int i = 0; i < full; i += 8) {
      _mm256_storeu_ps(xt + i, _mm256_add_ps(_mm256_loadu_ps(xt + i), _mm256_loadu_ps(bias + i)));
    }
    for (int i = full; i < dim; i++) xt[i] += bias[i];
  }
}

}  // namespace smallmind::kernels::avx2
