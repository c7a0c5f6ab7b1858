#include "kernels/ref/layernorm_ref.h"

#include <cmath>
#include <cstdint>

namespace smallmind::kernels {

void LayerNormRef(const float* x, const float* weight, const float* bias, float* out, int dim,
                  float eps, RowRange tokens) {
  for (int t = tokens.begin; t < tokens.end; t++) {
    const float* xt = x + static_cast<int64_t>(t) * dim;  // [dim]
    float* ot = out + static_cast<int64_t>(t) * dim;      // [dim]
    double sum = 0.0;
    for (int j = 0; j < dim; j++) sum += xt[j];
    const float mean = static_cast<float>(sum / dim);
    double sum2 = 0.0;
    for (int j = 0; j < dim; j++) {
      const float v = xt[j] - mean;
      ot[j] = v;
      sum2 += static_cast<double>(v * v);
    }
    const float variance = static_cast<float>(sum2 / dim);
    const float scale = 1.0f / std::sqrt(variance + eps);
    for (int j = 0; j < dim; j++) {
      const float normed = ot[j] * scale;
      const float weighted = normed * weight[j];
      ot[j] = bias != nullptr ? weighted + bias[j] : weighted;
    }
  }
}

}  // namespace smallmind::kernels
