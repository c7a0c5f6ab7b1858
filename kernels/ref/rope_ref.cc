#include "kernels/ref/rope_ref.h"

#include <cmath>

namespace smallmind::kernels {
namespace {

// Rotates (x[a], x[b]) by pos * RopeFrequency(j) with run.c's float arithmetic.
inline void RotatePair(float* x, int a, int b, int j, int pos, int n, const RopeFreqs& freqs) {
  float fcr, fci;
  RopeCosSin(pos * RopeFrequency(j, n, freqs), freqs, &fcr, &fci);
  const float v0 = x[a];
  const float v1 = x[b];
  x[a] = v0 * fcr - v1 * fci;
  x[b] = v0 * fci + v1 * fcr;
}

}  // namespace

void RopeRef(float* x, const int32_t* positions, int n_heads, int head_dim, const RopeFreqs& freqs,
             RopeLayout layout, RowRange rows) {
  const int n = RopeDims(head_dim, freqs);  // rotated dims; [n, head_dim) pass through
  const int half = n / 2;
  for (int r = rows.begin; r < rows.end; r++) {
    const int pos = positions[r / n_heads];
    float* head = x + static_cast<int64_t>(r) * head_dim;  // [head_dim]
    if (layout == RopeLayout::kInterleaved) {
      for (int i = 0; i < n; i += 2) RotatePair(head, i, i + 1, i, pos, n, freqs);
    } else {
      for (int i = 0; i < half; i++) RotatePair(head, i, i + half, 2 * i, pos, n, freqs);
    }
  }
}

}  // namespace smallmind::kernels
