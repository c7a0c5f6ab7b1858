#include "kernels/ref/quant_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/quant_blocks.h"

namespace smallmind::kernels::quant_fit {
namespace {

// Each sub-block tries the step that spans its range in exactly the format's levels, and steps
// that span it in up to 1 level fewer or more, kFitStep apart, each refined by least squares. On
// Gaussian data the 9 candidates cut the RMS error 5.5% (Q4_K) / 6% (Q6_K) against the plain
// step alone; 17 candidates gain another 0.2% at twice the time (~30 ns per element here).
constexpr int kFitCandidates = 4;  // on each side of the plain step
constexpr float kFitStep = 0.25f;

// Sums over one sub-block x: [n] (n even, <= 32) of q, q^2 and q * x for the candidate quants
// q = clamp(round((x - origin) * iscale + bias), 0, qmax) - bias, where the caller keeps
// (x - origin) * iscale within [-bias - 1, qmax + 1] so the truncating conversion is safe and
// rounds half up. Integer clamps and two q * x chains keep the candidates cheap.
struct QuantSums {
  float q, qq, qx;
};

QuantSums SumQuants(const float* x, int n, float origin, float iscale, int bias, int qmax) {
  const float shift = static_cast<float>(bias) + 0.5f;
  int q[32];
  for (int i = 0; i < n; i++) {
    q[i] = std::clamp(static_cast<int>((x[i] - origin) * iscale + shift), 0, qmax) - bias;
  }
  int sq = 0, sqq = 0;
  for (int i = 0; i < n; i++) {
    sq += q[i];
    sqq += q[i] * q[i];
  }
  float sqx0 = 0.0f, sqx1 = 0.0f;
  for (int i = 0; i < n; i += 2) {
    sqx0 += static_cast<float>(q[i]) * x[i];
    sqx1 += static_cast<float>(q[i + 1]) * x[i + 1];
  }
  return {static_cast<float>(sq), static_cast<float>(sqq), sqx0 + sqx1};
}

}  // namespace

// x clamped to [-limit, limit] into out: [n]; NaN reads as 0.
void ClampInto(const float* x, int n, float limit, float* out) {
  for (int i = 0; i < n; i++) out[i] = x[i] != x[i] ? 0.0f : std::clamp(x[i], -limit, limit);
}

// v clamped to [lo, hi] then rounded half up. NaN reads as lo (std::max(lo, NaN) is lo) and the
// clamp comes before the conversion, so inf is safe; plain compares keep it a few instructions.
int RoundClamp(float v, int lo, int hi) {
  v = std::min(static_cast<float>(hi), std::max(static_cast<float>(lo), v));
  return static_cast<int>(v - static_cast<float>(lo) + 0.5f) + lo;
}

// Least-squares fit of x ~ scale * q - min with q in 0..qmax (Q4_K 15, Q5_K 31) and min >= 0
// over one sub-block x: [n]. q comes from spreading [min(x, 0), max(x)] over qmax +-
// kFitCandidates * kFitStep levels; each candidate q gets its best (scale, min) and the smallest
// squared error wins.
ScaleMin FitScaleMinSubBlock(const float* x, int n, int qmax) {
  float lo = 0.0f, hi = x[0];
  double sx = 0.0, sxx = 0.0;
  for (int i = 0; i < n; i++) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
    sx += x[i];
    sxx += double{x[i]} * x[i];
  }
  const float levels = static_cast<float>(qmax);
  ScaleMin best{(hi - lo) / levels, 0.0f - lo};  // 0 - lo: +0, never -0, for lo = 0
  // A constant <= 0 (zeros included) is x = -min exactly; a range below kMinRange would give
  // a step that underflows fp16 anyway (and an infinite inverse step).
  if (!(hi - lo > kMinRange)) return {0.0f, best.min};
  double best_err = std::numeric_limits<double>::infinity();
  for (int c = -kFitCandidates; c <= kFitCandidates; c++) {
    const float iscale = (levels + kFitStep * static_cast<float>(c)) / (hi - lo);
    const QuantSums sums = SumQuants(x, n, lo, iscale, 0, qmax);
    const double sq = sums.q, sqq = sums.qq, sqx = sums.qx;
    // Minimise sum (a q + b - x)^2 over a and b <= 0 (b = -min): the 2x2 normal equations,
    // or b = 0 with a alone when their b would be positive.
    const double det = n * sqq - sq * sq;
    if (det <= 0.0) continue;  // every q equal: no slope to fit
    double a = (n * sqx - sq * sx) / det;
    double b = (sqq * sx - sq * sqx) / det;
    if (b > 0.0) {
      b = 0.0;
      a = sqx / sqq;
    }
    if (a <= 0.0) continue;
    const double err = sxx + a * a * sqq + n * b * b - 2 * a * sqx - 2 * b * sx + 2 * a * b * sq;
    if (err < best_err) {
      best_err = err;
      best = {static_cast<float>(a), static_cast<float>(-b)};
    }
  }
  return best;
}

// The element of largest magnitude maps to about -half with half +- kFitCandidates * kFitStep
// levels.
float FitSymmetricSubBlock(const float* x, int n, int half) {
  float amax = 0.0f, max = 0.0f;  // max: the element of largest magnitude, sign kept
  double sxx = 0.0;
  for (int i = 0; i < n; i++) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
    sxx += double{x[i]} * x[i];
  }
  if (!(amax > kMinRange)) return 0.0f;  // zeros, or a step that underflows fp16 anyway
  const float levels = static_cast<float>(half);
  float best = max / -levels;
  double best_err = std::numeric_limits<double>::infinity();
  for (int c = -kFitCandidates; c <= kFitCandidates; c++) {
    const float iscale = -(levels + kFitStep * static_cast<float>(c)) / max;
    const QuantSums sums = SumQuants(x, n, 0.0f, iscale, half, 2 * half - 1);
    const double sqq = sums.qq, sqx = sums.qx;
    if (sqq == 0.0) continue;
    const double a = sqx / sqq;
    const double err = sxx - a * sqx;  // the residual at the least-squares a
    if (err < best_err) {
      best_err = err;
      best = static_cast<float>(a);
    }
  }
  return best;
}

// fp16 of v >= 0, capped at the largest finite half.
uint16_t SuperScale(float v) { return Fp32ToFp16(std::fmin(v, kMaxFp16)); }

}  // namespace smallmind::kernels::quant_fit
