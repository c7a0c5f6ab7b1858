// GatedRows: the loop of the AVX2 gated activations (SwiGLU, gpt-oss's clamped SwiGLU, GeGLU):
// gate[t, i] = op(gate[t, i], up[t, i]) for t in tokens, 8 lanes at a time, a row's tail by
// masked loads and stores (its dead lanes read as 0 and are never stored).
//
// Included only by files built with AVX2 (or more) enabled; pure inline; thread-safe.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/partition.h"
#include "kernels/x86/x86_util.h"

namespace smallmind::kernels::SMALLMIND_X86_NS {

// op: __m256 (__m256 gate, __m256 up), the same operations on every lane.
template <class Op>
inline void GatedRows(float* gate, const float* up, int hidden, RowRange tokens, Op op) {
  const int full = hidden & ~7;
  for (int t = tokens.begin; t < tokens.end; t++) {
    float* g = gate + static_cast<int64_t>(t) * hidden;      // [hidden]
    const float* u = up + static_cast<int64_t>(t) * hidden;  // [hidden]
    for (int i = 0; i < hidden; i += 8) {
      const int n = i < full ? 8 : hidden - i;
      const __m256 gv = n == 8 ? _mm256_loadu_ps(g + i) : LoadTail(g + i, n);
      const __m256 uv = n == 8 ? _mm256_loadu_ps(u + i) : LoadTail(u + i, n);
      const __m256 out = op(gv, uv);
      if (n == 8) {
        _mm256_storeu_ps(g + i, out);
      } else {
        StoreTail(g + i, n, out);
      }
    }
  }
}

}  // namespace smallmind::kernels::SMALLMIND_X86_NS
