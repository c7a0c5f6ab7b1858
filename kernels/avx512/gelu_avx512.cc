// GeGLU on 512-bit registers with GeGluRef's bits (and so GeGluAvx2's): each lane rounds its gate
// to half, gathers the table entry, widens it, applies the +-10 rule as masked moves and
// multiplies by up, 16 lanes at a time; a row's tail by masked loads and stores.
#include <immintrin.h>

#include <cstdint>

#include "kernels/avx512/gated_rows_zmm.h"
#include "kernels/avx512/kernels_avx512.h"
#include "kernels/ref/gelu_ref.h"

// GCC 12's 512-bit intrinsics pass an _mm512_undefined source that its flow analysis then calls
// maybe-uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace smallmind::kernels::avx512 {

void GeGluAvx512(float* gate, const float* up, int hidden, RowRange tokens) {
  const uint16_t* table = GeluF16Table();
  const __m512 ten = _mm512_set1_ps(10.0f);
  const __m512 minus_ten = _mm512_set1_ps(-10.0f);
  GatedRows16(gate, up, hidden, tokens, [&](__m512 x, __m512 uv) {
    const __m256i h = _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    // 32 bits from 2 * index bytes in: the entry in the low half (the table has a spare entry).
    const __m512i wide = _mm512_i32gather_epi32(_mm512_cvtepu16_epi32(h), table, 2);
    __m512 gelu = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(wide));
    gelu = _mm512_mask_mov_ps(gelu, _mm512_cmp_ps_mask(x, ten, _CMP_GE_OQ), x);
    gelu = _mm512_maskz_mov_ps(
        static_cast<__mmask16>(~_mm512_cmp_ps_mask(x, minus_ten, _CMP_LE_OQ)), gelu);
    return _mm512_mul_ps(gelu, uv);
  });
}

}  // namespace smallmind::kernels::avx512
