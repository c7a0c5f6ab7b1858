// The sub-block fits smallmind's own K-quant and low-bit quantizers share (kernels/ref/
// dequant_ref.cc, low_bit_ref.cc): least-squares scales (and mins) over a few candidate steps,
// the clamps and roundings around them. Pure functions; thread-safe.
#pragma once

#include <cstdint>

namespace smallmind::kernels::quant_fit {

inline constexpr float kMaxFp16 = 65504.0f;  // largest finite half: the cap of every scale
// Sub-block ranges below this give steps far below fp16's smallest subnormal (6e-8): stored as 0.
inline constexpr float kMinRange = 1e-30f;

// x clamped to [-limit, limit] into out: [n]; NaN reads as 0.
void ClampInto(const float* x, int n, float limit, float* out);
// v clamped to [lo, hi] then rounded half up. NaN reads as lo; inf is safe.
int RoundClamp(float v, int lo, int hi);
// fp16 of v >= 0, capped at the largest finite half.
uint16_t SuperScale(float v);

struct ScaleMin {
  float scale;  // >= 0
  float min;    // >= 0; x ~ scale * q - min
};
// Least-squares fit of x ~ scale * q - min with q in 0..qmax and min >= 0 over one sub-block x:
// [n] (n even, <= 32). q comes from spreading [min(x, 0), max(x)] over qmax +- a few quarter
// levels; each candidate q gets its best (scale, min) and the smallest squared error wins.
ScaleMin FitScaleMinSubBlock(const float* x, int n, int qmax);
// Least-squares fit of x ~ scale * q with q in -half..half - 1 over one sub-block x: [n] (n even,
// <= 32; Q6_K half 32, Q3_K 4). The element of largest magnitude maps to about -half (the longer
// side; scale takes its sign); the candidate q with the smallest squared error wins.
float FitSymmetricSubBlock(const float* x, int n, int half);

}  // namespace smallmind::kernels::quant_fit
