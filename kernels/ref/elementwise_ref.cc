#include "kernels/ref/elementwise_ref.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace smallmind::kernels {

void SwiGluRef(float* gate, const float* up, int hidden, RowRange tokens) {
  for (int t = tokens.begin; t < tokens.end; t++) {
    float* g = gate + static_cast<int64_t>(t) * hidden;      // [hidden]
    const float* u = up + static_cast<int64_t>(t) * hidden;  // [hidden]
    for (int i = 0; i < hidden; i++) g[i] = Silu(g[i]) * u[i];
  }
}

void SwiGluOaiRef(float* gate, const float* up, int hidden, float alpha, float limit,
                  RowRange tokens) {
  for (int t = tokens.begin; t < tokens.end; t++) {
    float* g = gate + static_cast<int64_t>(t) * hidden;      // [hidden]
    const float* u = up + static_cast<int64_t>(t) * hidden;  // [hidden]
    for (int i = 0; i < hidden; i++) {
      const float x = std::min(g[i], limit);
      const float y = std::clamp(u[i], -limit, limit);
      g[i] = x / (1.0f + std::exp(alpha * -x)) * (y + 1.0f);
    }
  }
}

void AddRef(float* x, const float* delta, int dim, RowRange tokens) {
  for (int t = tokens.begin; t < tokens.end; t++) {
    float* xt = x + static_cast<int64_t>(t) * dim;            // [dim]
    const float* dt = delta + static_cast<int64_t>(t) * dim;  // [dim]
    for (int i = 0; i < dim; i++) xt[i] += dt[i];
  }
}

void AddBiasRef(float* x, const float* bias, int dim, RowRange tokens) {
  for (int t = tokens.begin; t < tokens.end; t++) {
    float* xt = x + static_cast<int64_t>(t) * dim;  // [dim]
    for (int i = 0; i < dim; i++) xt[i] += bias[i];
  }
}

void ScaleRef(float* x, int dim, float s, RowRange tokens) {
  for (int t = tokens.begin; t < tokens.end; t++) {
    float* xt = x + static_cast<int64_t>(t) * dim;  // [dim]
    for (int i = 0; i < dim; i++) xt[i] *= s;
  }
}

void SoftCapRowsRef(float* x, int dim, float cap, RowRange tokens) {
  const float inverse = 1.0f / cap;
  for (int t = tokens.begin; t < tokens.end; t++) {
    float* xt = x + static_cast<int64_t>(t) * dim;  // [dim]
    for (int i = 0; i < dim; i++) xt[i] = cap * std::tanh(xt[i] * inverse);
  }
}

}  // namespace smallmind::kernels
