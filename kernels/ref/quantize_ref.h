// Scalar reference of the integer matmuls: activation quantization to Q8 rows (kernels/q8_act.h),
// those rows as octets, and the Q8_0 / Q4_0 / Q4_K / Q5_K / Q6_K / IQ4_XS weight
// matmuls over them. The
// oracles the SIMD parallel kernels are tested against. Pure functions; thread-safe on disjoint
// outputs.
#pragma once

#include <cstdint>

#include "kernels/partition.h"

namespace smallmind::kernels {

// For t in tokens: row t of xq = the kQ8 row of x[t, :] (in_dim a multiple of 32; llama.cpp's
// q8_0): per block of 32, q = round-half-even(x * (127 / amax)) (0 when amax is 0), d =
// fp16(amax / 127), s = d * (sum of the q), exact.
void QuantizeQ8ActRef(const float* x, void* xq, int in_dim, RowRange tokens);
// One block of it: the 32 quants of x at q; returns fp16(amax / 127) as a float, and sets
// *d_exact (when not null) to amax / 127 unrounded.
float QuantizeBlockQ8_0Ref(const float* x, int8_t* q, float* d_exact = nullptr);
// The kQ8_1 row (llama.cpp's q8_1): the kQ8 row with s = fp16((amax / 127) * sum).
void QuantizeQ8_1ActRef(const float* x, void* xq, int in_dim, RowRange tokens);
// The kQ8K row (llama.cpp's q8_K; in_dim a multiple of 256): per 256, max = the first element of
// largest |x|, q = min(127, round-half-even((-127 / max) * x)), d = 1 / (-127 / max) in each of
// the 8 blocks of 32, s = d * (block's quant sum) (all 0 when the 256 are 0).
void QuantizeQ8KActRef(const float* x, void* xq, int in_dim, RowRange tokens);
// The K/V cache's kQ8 block (F32ToQ8Ref; this project's scheme, not llama.cpp's): d = amax /
// 127 unrounded, q = round-half-even(x * (1 / d)); returns d.
float QuantizeBlockQ8Ref(const float* x, int8_t* q);
// Octets [first, last) of the n_tokens Q8 rows xq (Q8ActRowBytes(n_dim) bytes each) written into
// `octets` (Q8ActOctetsBytes(n_tokens, n_dim) bytes, the layout in kernels/q8_act.h): the
// definition the SIMD quantizers into octets are tested against.
void PackQ8ActOctetsRef(const void* xq, void* octets, int n_dim, int n_tokens, int first, int last);

// y[t, r] = sum over blocks b, left to right in one float, of (dw_b * dx_b) * isum_b, isum_b the
// exact integer dot product of the block's weight quants (Q4_0: nibble - 8; Q5_0: q - 16; IQ4_NL:
// the levels kIq4NlValues; MXFP4: kMxfp4Values) and activation quants. xq: [n_tokens] Q8 rows of
// in_dim.
void MatmulQ8_0Q8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows);
void MatmulQ4_0Q8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows);
void MatmulQ5_0Q8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows);
void MatmulIQ4_NLQ8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                          int out_dim, RowRange rows);
// MXFP4: dw = 2^(e - 128), the weight quants the doubled E2M1 levels kMxfp4Values (llama.cpp's
// vec_dot_mxfp4_q8_0).
void MatmulMXFP4Q8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                         int out_dim, RowRange rows);

// K-quants (w in GGUF layout, in_dim a multiple of 256). Activation block b (32 wide) meets one
// Q4_K / Q5_K sub-block j = b % 8 (scale sc, min m, super-block scales d, dmin) or two Q6_K
// sub-blocks of 16 (int8 scales sc0, sc1, super-block scale d). With isum the exact integer dot
// product, y[t, r] = one float, blocks b left to right, of
//   Q4_K: y = fma(float(sc * isum(nibbles)), d * dx_b, y); y = fma(-(dmin * m), s_b, y)
//   Q5_K: Q4_K's steps with the 5-bit quants (nibble | high bit << 4)
//   IQ4_XS: y = fma(float((ls - 32) * isum(levels)), d * dx_b, y), block b = sub-block b % 8
//   Q6_K: y = fma(float(sc0 * isum0(q - 32) + sc1 * isum1(q - 32)), d * dx_b, y)
// (fma rounds once; d * dx_b rounds; dmin * m and the integer parts are exact).
void MatmulQ4_KQ8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows);
void MatmulQ5_KQ8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows);
void MatmulQ6_KQ8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows);
void MatmulIQ4_XSQ8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                          int out_dim, RowRange rows);

}  // namespace smallmind::kernels
