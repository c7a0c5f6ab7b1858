// AVX2 GeGLU: GeGluRef's bits, 8 lanes at a time. Each lane rounds its gate to half (F16C, the
// rounding Fp32ToFp16 does), gathers the table entry, widens it, applies the +-10 rule as blends
// and multiplies by up; no lane's result depends on another's.
#include <immintrin.h>

#include <cstdint>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/ref/gelu_ref.h"
#include "kernels/x86/gated_rows.h"
#include "kernels/x86/x86_util.h"

namespace smallmind::kernels::avx2 {
namespace {

// GeluF16Ref of each lane of x; table: GeluF16Table().
inline __m256 GeluF16x8(__m256 x, const uint16_t* table) {
  const __m128i h = _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256i index = _mm256_cvtepu16_epi32(h);
  // 32 bits from 2 * index bytes in: the entry in the low half (the table has a spare last entry).
  const __m256i wide =
      _mm256_and_si256(_mm256_i32gather_epi32(reinterpret_cast<const int*>(table), index, 2),
                       _mm256_set1_epi32(0xffff));
  // [e0..e3 e0..e3 | e4..e7 e4..e7] -> e0..e7 in the low 128 bits.
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(wide, wide), 0x08);
  const __m256 gelu = _mm256_cvtph_ps(_mm256_castsi256_si128(packed));
  const __m256 high = _mm256_cmp_ps(x, _mm256_set1_ps(10.0f), _CMP_GE_OQ);
  const __m256 low = _mm256_cmp_ps(x, _mm256_set1_ps(-10.0f), _CMP_LE_OQ);
  return _mm256_andnot_ps(low, _mm256_blendv_ps(gelu, x, high));
}

}  // namespace

void GeGluAvx2(float* gate, const float* up, int hidden, RowRange tokens) {
  const uint16_t* table = GeluF16Table();
  GatedRows(gate, up, hidden, tokens,
            [table](__m256 gv, __m256 uv) { return _mm256_mul_ps(GeluF16x8(gv, table), uv); });
}

}  // namespace smallmind::kernels::avx2
