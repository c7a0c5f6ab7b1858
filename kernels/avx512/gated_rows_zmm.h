// GatedRows16: the loop of the AVX-512 gated activations (SwiGLU, gpt-oss's clamped SwiGLU,
// GeGLU): gate[t, i] = op(gate[t, i], up[t, i]) for t in tokens, 16 lanes at a time, a row's tail
// by masked loads (dead lanes 0) and stores.
//
// Included only by files built with AVX-512 enabled; pure inline; thread-safe.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/partition.h"

namespace smallmind::kernels::avx512 {

// op: __m512 (__m512 gate, __m512 up), the same operations on every lane.
template <class Op>
inline void GatedRows16(float* gate, const float* up, int hidden, RowRange tokens, Op op) {
  for (int t = tokens.begin; t < tokens.end; t++) {
    float* g = gate + static_cast<int64_t>(t) * hidden;      // [hidden]
    const float* u = up + static_cast<int64_t>(t) * hidden;  // [hidden]
    for (int i = 0; i < hidden; i += 16) {
      const int n = hidden - i < 16 ? hidden - i : 16;
      const __mmask16 lanes = static_cast<__mmask16>((1u << n) - 1);
      const __m512 out =
          op(_mm512_maskz_loadu_ps(lanes, g + i), _mm512_maskz_loadu_ps(lanes, u + i));
      _mm512_mask_storeu_ps(g + i, lanes, out);
    }
  }
}

}  // namespace smallmind::kernels::avx512
