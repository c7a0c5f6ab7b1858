#include "kernels/ref/gelu_ref.h"

#include <array>
#include <cmath>

#include "kernels/quant_blocks.h"

namespace smallmind::kernels {
namespace {

constexpr float kGeluCoefA = 0.044715f;
constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
constexpr int kHalves = 1 << 16;

}  // namespace

float GeluTanhRef(float x) {
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * std::fma(kGeluCoefA * x, x, 1.0f)));
}

const uint16_t* GeluF16Table() {
  static const std::array<uint16_t, kHalves + 1> table = [] {
    std::array<uint16_t, kHalves + 1> t{};
    for (int h = 0; h < kHalves; h++) {
      t[h] = Fp32ToFp16(GeluTanhRef(Fp16ToFp32(static_cast<uint16_t>(h))));
    }
    return t;
  }();
  return table.data();
}

float GeluF16Ref(float x) {
  if (x <= -10.0f) return 0.0f;
  if (x >= 10.0f) return x;
  return Fp16ToFp32(GeluF16Table()[Fp32ToFp16(x)]);
}

void GeGluRef(float* gate, const float* up, int hidden, RowRange tokens) {
  for (int t = tokens.begin; t < tokens.end; t++) {
    float* g = gate + static_cast<int64_t>(t) * hidden;      // [hidden]
    const float* u = up + static_cast<int64_t>(t) * hidden;  // [hidden]
    for (int i = 0; i < hidden; i++) g[i] = GeluF16Ref(g[i]) * u[i];
  }
}

void GeluRef(float* x, int hidden, RowRange tokens) {
  for (int t = tokens.begin; t < tokens.end; t++) {
    float* row = x + static_cast<int64_t>(t) * hidden;  // [hidden]
    for (int i = 0; i < hidden; i++) row[i] = GeluF16Ref(row[i]);
  }
}

}  // namespace smallmind::kernels
