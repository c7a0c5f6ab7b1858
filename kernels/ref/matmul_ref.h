// Scalar reference matmuls, one per weight type: the oracles for every SIMD matmul. Called through
// KernelTable by the engine and by tests; thread-safe on disjoint row ranges. Reduction order: one
// float accumulator per output, input left to right, whatever the batch size or row range.
//
// Weights are read row by row, each block dequantized into a small buffer with dequant_ref.h (no
// dequantized copy of the matrix), so a quantized matmul is bitwise MatmulF32Ref on the
// DequantizeRef'd weights.
#pragma once

#include "kernels/partition.h"

namespace smallmind::kernels {

// y[t, r] = dot(w[r, :], x[t, :]) for t < n_tokens, r in rows.
// w: [out_dim, in_dim] of the function's type (one row per output feature; in_dim a multiple of the
// type's block size); x: [n_tokens, in_dim] floats; y: [n_tokens, out_dim].
void MatmulF32Ref(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                  RowRange rows);
void MatmulF16Ref(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                  RowRange rows);
void MatmulBf16Ref(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows);
void MatmulQ8_0Ref(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows);
void MatmulQ4_0Ref(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows);
void MatmulQ5_0Ref(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows);
void MatmulIQ4_NLRef(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                     RowRange rows);
void MatmulMXFP4Ref(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                    RowRange rows);
void MatmulQ4_KRef(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows);
void MatmulQ5_KRef(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows);
void MatmulQ6_KRef(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows);
void MatmulIQ4_XSRef(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                     RowRange rows);
void MatmulQ4_1Ref(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows);
void MatmulQ5_1Ref(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows);
void MatmulQ2_KRef(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows);
void MatmulQ3_KRef(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows);

}  // namespace smallmind::kernels
