// Scalar reference RMSNorm: the oracle for SIMD variants. Called through KernelTable by the engine;
// thread-safe on disjoint token ranges. Reduction order: one float accumulator of x*x, left to
// right.
#pragma once

#include "kernels/partition.h"

namespace smallmind::kernels {

// out[t, :] = weight * (x[t, :] / sqrt(mean(x[t, :]^2) + eps)) for t in tokens.
// x, out: [n_tokens, dim] (out may alias x); weight: [dim].
void RmsNormRef(const float* x, const float* weight, float* out, int dim, float eps,
                RowRange tokens);

}  // namespace smallmind::kernels
