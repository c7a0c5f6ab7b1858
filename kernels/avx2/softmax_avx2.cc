// AVX2 softmax; the order is stated in kernels_avx2.h.
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/x86/x86_util.h"

namespace smallmind::kernels::avx2 {

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

}  // namespace smallmind::kernels::avx2
