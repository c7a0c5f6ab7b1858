#include "kernels/vector_math.h"

#include <cstdio>
#include <cstdlib>

namespace smallmind::kernels {

const VectorMathOps& VectorMathFor(Isa isa) {
  if (isa == Isa::kBest) isa = BestIsa();
  if (!CpuSupports(isa)) {
    // Kernels cannot depend on the project's check.h (STYLE §23): report and abort directly.
    std::fprintf(stderr, "kernels: this CPU does not support %s\n", IsaName(isa));
    std::abort();
  }
  // An AVX-512 CPU runs the AVX2 versions (no AVX-512 ones yet).
  return isa == Isa::kRef ? VectorMathRef() : avx2::VectorMathAvx2();
}

namespace {
// Chosen once, on first use (thread-safe static initialisation); immutable afterwards.
const VectorMathOps& Best() {
  static const VectorMathOps& best = VectorMathFor(Isa::kBest);
  return best;
}
}  // namespace

float MaxValue(const float* x, int n) { return Best().max_value(x, n); }
int ArgMax(const float* x, int n) { return Best().arg_max(x, n); }
int FindFirstGreater(const float* x, int n, float threshold) {
  return Best().find_first_greater(x, n, threshold);
}
void ExpOfScaled(const float* x, float* out, int n, float shift, float t) {
  Best().exp_of_scaled(x, out, n, shift, t);
}
double SumToDouble(const float* x, int n) { return Best().sum_to_double(x, n); }

}  // namespace smallmind::kernels
