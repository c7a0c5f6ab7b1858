// Softmax on 512-bit registers with SoftmaxAvx2's bits: the max is exact in any order; each exp
// is avx2::Exp's sequence of lane-wise operations (Exp16, exp_zmm.h), 16 lanes at a time; the sum
// keeps SoftmaxAvx2's 8 lanes and order (positions 8m + l added into lane l for m = 0, 1, ...:
// the low half of a 16-wide group, then its high half) and its Fold; each division is lane-wise.
// The tail's loads and stores are AVX-512 masked moves (AVX2's vmaskmovps is microcoded on AMD
// cores, tens of cycles each, and an attention row ends in a tail more often than not).
#define SMALLMIND_X86_NS avx512
#include <immintrin.h>

#include <cstdint>

#include "kernels/avx512/exp_zmm.h"
#include "kernels/avx512/kernels_avx512.h"
#include "kernels/x86/x86_util.h"

// GCC 12's 512-bit extraction intrinsics pass an _mm256_undefined_ps source that its flow
// analysis then calls (maybe-)uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace smallmind::kernels::avx512 {
namespace {

void SoftmaxRow(float* row, int row_len) {
  const int full16 = row_len & ~15;
  // The max: exact whatever the order (a NaN-free row).
  float max_val = row[0];
  __m512 vmax = _mm512_set1_ps(max_val);
  for (int i = 0; i < full16; i += 16) vmax = _mm512_max_ps(vmax, _mm512_loadu_ps(row + i));
  if (full16 < row_len) {
    const __mmask16 m = static_cast<__mmask16>((1u << (row_len - full16)) - 1);
    vmax = _mm512_mask_max_ps(vmax, m, vmax, _mm512_maskz_loadu_ps(m, row + full16));
  }
  max_val = _mm512_reduce_max_ps(vmax);

  const __m512 m = _mm512_set1_ps(max_val);
  __m256 sum = _mm256_setzero_ps();
  int i = 0;
  for (; i < full16; i += 16) {
    const __m512 e = Exp16(_mm512_sub_ps(_mm512_loadu_ps(row + i), m));
    _mm512_storeu_ps(row + i, e);
    sum = _mm256_add_ps(sum, _mm512_castps512_ps256(e));
    sum = _mm256_add_ps(sum, _mm512_extractf32x8_ps(e, 1));
  }
  if (i < row_len) {  // up to 15 more: a whole 8-group, then the tail's exps (zeros elsewhere)
    const int n = row_len - i;
    const __mmask16 lanes = static_cast<__mmask16>((1u << n) - 1);
    const __m512 e =
        _mm512_maskz_mov_ps(lanes, Exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(lanes, row + i), m)));
    _mm512_mask_storeu_ps(row + i, lanes, e);
    sum = _mm256_add_ps(sum, _mm512_castps512_ps256(e));
    if (n > 8) sum = _mm256_add_ps(sum, _mm512_extractf32x8_ps(e, 1));
  }
  const __m512 total = _mm512_set1_ps(Fold(sum));
  for (i = 0; i < full16; i += 16) {
    _mm512_storeu_ps(row + i, _mm512_div_ps(_mm512_loadu_ps(row + i), total));
  }
  if (i < row_len) {
    const __mmask16 lanes = static_cast<__mmask16>((1u << (row_len - i)) - 1);
    _mm512_mask_storeu_ps(row + i, lanes,
                          _mm512_div_ps(_mm512_maskz_loadu_ps(lanes, row + i), total));
  }
}

}  // namespace

void SoftmaxAvx512(float* x, int row_len, RowRange rows) {
  for (int r = rows.begin; r < rows.end; r++) {
    SoftmaxRow(x + static_cast<int64_t>(r) * row_len, row_len);
  }
}

}  // namespace smallmind::kernels::avx512
