// Vector math over float arrays for the sampler (worker/sample): max, argmax, a first-above search,
// scaled exponentials and a double-precision sum. The free functions run the best ISA this CPU
// supports, chosen once by CPUID; VectorMathFor() gives one ISA's table for tests and benchmarks.
// Pure functions; thread-safe.
#pragma once

#include "kernels/dispatch.h"

namespace smallmind::kernels {

// NaN is never a maximum nor "greater" (every ordered comparison with NaN is false), so callers
// that treat NaN as -inf need no pass of their own.
struct VectorMathOps {
  // max(x[0, n)), ignoring NaN; -inf when n == 0 or nothing is above -inf.
  float (*max_value)(const float* x, int n);
  // The lowest i with x[i] == max_value(x, n); 0 when nothing is above -inf (what a strict scan
  // `if (x[i] > best)` from best = -inf gives).
  int (*arg_max)(const float* x, int n);
  // The lowest i with x[i] > threshold, or n when there is none.
  int (*find_first_greater)(const float* x, int n, float threshold);
  // out[i] = exp((x[i] - shift) / t) for t > 0 and (x[i] - shift) / t <= 88; out may be x.
  // Divides (never multiplies by 1/t) so that x[i] == shift gives exactly 1 and a denormal t cannot
  // overflow 1/t. NaN (in x, or from inf - inf) and -inf give 0; results below 2^-126 may be
  // flushed to 0 (AVX2 flushes those below about 2^-127.5; the reference keeps std::exp's
  // denormals). Within 2 ulp of std::exp otherwise.
  void (*exp_of_scaled)(const float* x, float* out, int n, float shift, float t);
  // sum(x[0, n)) in double: x[i] is added to lane accumulator i % 8 in increasing i, then the lanes
  // fold as ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)). The same bits on every ISA.
  double (*sum_to_double)(const float* x, int n);
};

// The table for `isa` (kBest: BestIsa()); aborts if this CPU does not support it.
const VectorMathOps& VectorMathFor(Isa isa);

// The per-ISA tables VectorMathFor() chooses from.
const VectorMathOps& VectorMathRef();
namespace avx2 {
const VectorMathOps& VectorMathAvx2();
}  // namespace avx2

// The best table's functions (see VectorMathOps for their contracts).
float MaxValue(const float* x, int n);
int ArgMax(const float* x, int n);
int FindFirstGreater(const float* x, int n, float threshold);
void ExpOfScaled(const float* x, float* out, int n, float shift, float t);
double SumToDouble(const float* x, int n);

}  // namespace smallmind::kernels
