#include "kernels/ref/matmul_ref.h"

#include <cstdint>

namespace smallmind::kernels {

void MatmulF32Ref(const void* w, const float* x, float* y, int n_tokens, int in_dim, int out_dim,
                  RowRange rows) {
  const float* weights = static_cast<const float*>(w);
  for (int r = rows.begin; r < rows.end; r++) {
    const float* w_row = weights + static_cast<int64_t>(r) * in_dim;  // [in_dim]
    // Each weight row is read once for every token of the batch.
    for (int t = 0; t < n_tokens; t++) {
      const float* x_row = x + static_cast<int64_t>(t) * in_dim;  // [in_dim]
      float val = 0.0f;
      for (int j = 0; j < in_dim; j++) val += w_row[j] * x_row[j];
      y[static_cast<int64_t>(t) * out_dim + r] = val;
    }
  }
}

}  // namespace smallmind::kernels
