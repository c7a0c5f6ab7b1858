// Scalar reference matmul over F32 weights: the oracle for every SIMD matmul. Called through
// KernelTable by the engine; thread-safe on disjoint row ranges. Reduction order: each output is
// one float accumulator summed over the input left to right, whatever the batch size or row range.
#pragma once

#include "kernels/partition.h"

namespace smallmind::kernels {

// y[t, r] = dot(w[r, :], x[t, :]) for t < n_tokens, r in rows.
// w: [out_dim, in_dim] F32 (one row per output feature); x: [n_tokens, in_dim]; y: [n_tokens,
// out_dim].
void MatmulF32Ref(const void* w, const float* x, float* y, int n_tokens, int in_dim, int out_dim,
                  RowRange rows);

}  // namespace smallmind::kernels
