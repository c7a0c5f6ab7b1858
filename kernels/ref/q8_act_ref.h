// Scalar reference of the parallel path's integer matmuls: activation quantization to Q8 rows
// (kernels/q8_act.h) and the Q8_0 / Q4_0 weight matmuls over them. The oracles the SIMD parallel
// kernels are tested against. Pure functions; thread-safe on disjoint outputs.
#pragma once

#include "kernels/partition.h"

namespace smallmind::kernels {

// For t in tokens: row t of xq = Q8 row of x[t, :] (in_dim a multiple of 32): per block of 32,
// d = amax / 127, q = round-half-even(x * (1 / d)) (0 when d is 0), s = d * (sum of the q).
void QuantizeQ8ActRef(const float* x, void* xq, int in_dim, RowRange tokens);

// y[t, r] = sum over blocks b, left to right in one float, of (dw_b * dx_b) * isum_b, isum_b the
// exact integer dot product of the block's weight quants (Q4_0: nibble - 8) and activation quants.
// xq: [n_tokens] Q8 rows of in_dim.
void MatmulQ8_0Q8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows);
void MatmulQ4_0Q8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows);

}  // namespace smallmind::kernels
