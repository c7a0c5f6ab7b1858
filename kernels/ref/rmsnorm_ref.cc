#include "kernels/ref/rmsnorm_ref.h"

#include <cmath>
#include <cstdint>

namespace smallmind::kernels {

void RmsNormRef(const float* x, const float* weight, float* out, int dim, float eps,
                RowRange tokens) {
  for (int t = tokens.begin; t < tokens.end; t++) {
    const float* xt = x + static_cast<int64_t>(t) * dim;  // [dim]
    float* ot = out + static_cast<int64_t>(t) * dim;      // [dim]
    float ss = 0.0f;
    for (int j = 0; j < dim; j++) ss += xt[j] * xt[j];
    ss /= dim;
    ss += eps;
    ss = 1.0f / std::sqrt(ss);
    for (int j = 0; j < dim; j++) ot[j] = weight[j] * (ss * xt[j]);
  }
}

}  // namespace smallmind::kernels
