// AVX2 SwiGLU and adds; the orders are stated in kernels_avx2.h.
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/x86/gated_rows.h"
#include "kernels/x86/x86_util.h"

namespace smallmind::kernels::avx2 {

void SwiGluAvx2(float* gate, const float* up, int hidden, RowRange tokens) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  GatedRows(gate, up, hidden, tokens, [&](__m256 gv, __m256 uv) {
    const __m256 silu = _mm256_div_ps(gv, _mm256_add_ps(one, Exp(_mm256_xor_ps(gv, sign))));
    return _mm256_mul_ps(silu, uv);
  });
}

void SwiGluOaiAvx2(float* gate, const float* up, int hidden, float alpha, float limit,
                   RowRange tokens) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 a = _mm256_set1_ps(alpha), hi = _mm256_set1_ps(limit), lo = _mm256_set1_ps(-limit);
  GatedRows(gate, up, hidden, tokens, [&](__m256 gv, __m256 uv) {
    // std::min(g, limit) and std::clamp(u, -limit, limit), NaN kept: min_ps / max_ps answer
    // their second operand when either is NaN.
    const __m256 x = _mm256_min_ps(hi, gv);
    const __m256 y = _mm256_max_ps(lo, _mm256_min_ps(hi, uv));
    const __m256 e = Exp(_mm256_xor_ps(_mm256_mul_ps(a, x), sign));
    return _mm256_mul_ps(_mm256_div_ps(x, _mm256_add_ps(one, e)), _mm256_add_ps(y, one));
  });
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
