// SwiGLU and gpt-oss's clamped SwiGLU on 512-bit registers with SwiGluAvx2's / SwiGluOaiAvx2's
// bits: each lane's operations are the AVX2 kernel's (g / (1 + exp(-g)) * u, the exp by Exp16:
// avx2::Exp's sequence), 16 lanes at a time; a row's tail by AVX-512 masked moves.
#include <immintrin.h>

#include <cstdint>

#include "kernels/avx512/exp_zmm.h"
#include "kernels/avx512/gated_rows_zmm.h"
#include "kernels/avx512/kernels_avx512.h"

// GCC 12's 512-bit min/max intrinsics pass an _mm512_undefined_ps source that its flow analysis
// then calls maybe-uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace smallmind::kernels::avx512 {

void SwiGluAvx512(float* gate, const float* up, int hidden, RowRange tokens) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 sign = _mm512_set1_ps(-0.0f);
  GatedRows16(gate, up, hidden, tokens, [&](__m512 gv, __m512 uv) {
    const __m512 silu = _mm512_div_ps(gv, _mm512_add_ps(one, Exp16(_mm512_xor_ps(gv, sign))));
    return _mm512_mul_ps(silu, uv);
  });
}

void SwiGluOaiAvx512(float* gate, const float* up, int hidden, float alpha, float limit,
                     RowRange tokens) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 sign = _mm512_set1_ps(-0.0f);
  const __m512 a = _mm512_set1_ps(alpha), hi = _mm512_set1_ps(limit), lo = _mm512_set1_ps(-limit);
  GatedRows16(gate, up, hidden, tokens, [&](__m512 gv, __m512 uv) {
    const __m512 x = _mm512_min_ps(hi, gv);  // NaN kept, as SwiGluOaiAvx2's
    const __m512 y = _mm512_max_ps(lo, _mm512_min_ps(hi, uv));
    const __m512 e = Exp16(_mm512_xor_ps(_mm512_mul_ps(a, x), sign));
    return _mm512_mul_ps(_mm512_div_ps(x, _mm512_add_ps(one, e)), _mm512_add_ps(y, one));
  });
}

}  // namespace smallmind::kernels::avx512
