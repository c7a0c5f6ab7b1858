// Scalar references of the low-bit weight types Q4_1, Q5_1, Q2_K and Q3_K
// (kernels/low_bit_blocks.h): dequantization (the definition every kernel reproduces),
// smallmind's own quantizers (for the model generator), Q3_K written exactly as Q6_K (the x86
// packers' widening), and the integer matmuls over Q8 activation rows that the SIMD kernels equal
// bitwise. Pure functions; thread-safe on disjoint outputs.
#pragma once

#include <cstdint>

#include "kernels/low_bit_blocks.h"
#include "kernels/partition.h"

namespace smallmind::kernels {

// Each reads n elements (a multiple of the block size) and writes y: [n] floats, as ggml's
// dequantize_row_*: Q4_1 / Q5_1 q * d + m; Q2_K (d * sc) * q - dmin * m; Q3_K (d * sc) * q.
void DequantizeQ4_1Ref(const BlockQ4_1* x, float* y, int64_t n);
void DequantizeQ5_1Ref(const BlockQ5_1* x, float* y, int64_t n);
void DequantizeQ2_KRef(const BlockQ2_K* x, float* y, int64_t n);
void DequantizeQ3_KRef(const BlockQ3_K* x, float* y, int64_t n);

// Quantizers. x: [n] (n a multiple of the block size); y: the blocks. Finite inputs give finite
// blocks (inputs are clamped to what the fp16 scales reach); all-zero input gives zeros.
//   Q4_1 / Q5_1 (ggml's quantize_row_q4_1_ref / q5_1_ref formula): per 32, m = min x, d =
//       (max - min) / 15 (31), q = min(15 (31), trunc((x - m) / d + 0.5)).
//   Q2_K: each sub-block of 16 fits x ~ s * q - m (q in 0..3, m >= 0) by least squares over a few
//       candidate steps (kernels/ref/quant_fit.h); d = max s / 15 and dmin = max m / 15 in fp16;
//       s and m rounded to 4 bits against them, then every q against the stored s and m.
//   Q3_K: each sub-block of 16 fits x ~ s * q (q in -4..3, s signed) the same way; d = max |s| /
//       31 in fp16, s rounded to -32..31 against it, then every q against the stored s.
void QuantizeQ4_1Ref(const float* x, BlockQ4_1* y, int64_t n);
void QuantizeQ5_1Ref(const float* x, BlockQ5_1* y, int64_t n);
void QuantizeQ2_KRef(const float* x, BlockQ2_K* y, int64_t n);
void QuantizeQ3_KRef(const float* x, BlockQ3_K* y, int64_t n);

// The Q6_K block of the same values: quants q + 32 (28..35), int8 scales sc - 32, the same d.
// Q6_K's x = d * sc * (q6 - 32) is then Q3_K's d * (sc - 32) * q exactly.
BlockQ6_K WidenQ3_KToQ6_K(const BlockQ3_K& b);

// Integer matmuls over Q8 rows (kernels/q8_act.h), y[t, r] one float per output:
//   Q4_1 / Q5_1 over kQ8_1 rows: per block b of 32 in order, y = fma(float(isum_b), dw * dx_b,
//       y); y = fma(m_w, s_b, y), isum_b the exact dot product of the unsigned weight quants and
//       the activation quants (llama.cpp's q4_1 / q5_1 x q8_1 dot).
//   Q3_K over kQ8K rows: per block b of 32 in order, y = fma(float(sc0 * isum0 + sc1 * isum1), d
//       * dx_b, y) over its two sub-blocks of 16 (sc the signed scales, q in -4..3): Q6_K's steps.
//   Q2_K over kQ8K rows: per super-block in order, isum = sum over its 16 sub-blocks of sc_s *
//       (dot product of q and x), msum = sum of m_s * (sum of the sub-block's activation quants),
//       both exact; y = fma(float(isum), d * dx, y); y = fma(-float(msum), dmin * dx, y) (dx the
//       super-block's activation scale), as llama.cpp's q2_K x q8_K dot.
void MatmulQ4_1Q8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows);
void MatmulQ5_1Q8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows);
void MatmulQ2_KQ8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows);
void MatmulQ3_KQ8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows);

}  // namespace smallmind::kernels
