// Scalar reference of kernels/vector_math.h: the oracle the AVX2 versions are tested against.
#include <cmath>
#include <limits>

#include "kernels/vector_math.h"

namespace smallmind::kernels {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

float MaxValueRef(const float* x, int n) {
  float best = kNegInf;
  for (int i = 0; i < n; ++i) best = x[i] > best ? x[i] : best;
  return best;
}

int ArgMaxRef(const float* x, int n) {
  int best = 0;
  float best_value = kNegInf;
  for (int i = 0; i < n; ++i) {
    if (x[i] > best_value) {  // strict: the lowest index keeps a tie
      best_value = x[i];
      best = i;
    }
  }
  return best;
}

int FindFirstGreaterRef(const float* x, int n, float threshold) {
  for (int i = 0; i < n; ++i) {
    if (x[i] > threshold) return i;
  }
  return n;
}

void ExpOfScaledRef(const float* x, float* out, int n, float shift, float t) {
  for (int i = 0; i < n; ++i) {
    const float v = (x[i] - shift) / t;
    out[i] = v == v ? std::exp(v) : 0.0f;
  }
}

double SumToDoubleRef(const float* x, int n) {
  double lane[8] = {};
  for (int i = 0; i < n; ++i) lane[i % 8] += x[i];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

}  // namespace

const VectorMathOps& VectorMathRef() {
  static constexpr VectorMathOps kOps = {MaxValueRef, ArgMaxRef, FindFirstGreaterRef,
                                         ExpOfScaledRef, SumToDoubleRef};
  return kOps;
}

}  // namespace smallmind::kernels
