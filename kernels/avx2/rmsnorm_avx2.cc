// AVX2 RMSNorm; the order is stated in kernels_avx2.h.
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/x86/x86_util.h"

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

}  // namespace smallmind::kernels::avx2
