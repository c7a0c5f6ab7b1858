// Scalar reference dequantization (every GGUF tensor type smallmind reads -> f32), the ggml
// reference quantizers for Q8_0, Q4_0 and Q5_0 and smallmind's own Q4_K / Q5_K / Q6_K quantizers
// (used by the model generator). The oracles that SIMD dequant/matmul variants are tested against.
// Pure functions; thread-safe on disjoint outputs.
#pragma once

#include <cstdint>

#include "kernels/dtype.h"
#include "kernels/quant_blocks.h"

namespace smallmind::kernels {

// Each routine reads n elements (n a multiple of the type's block size) and writes y: [n] f32.
void DequantizeF16Ref(const uint16_t* x, float* y, int64_t n);
void DequantizeBf16Ref(const uint16_t* x, float* y, int64_t n);
void DequantizeQ8_0Ref(const BlockQ8_0* x, float* y, int64_t n);
void DequantizeQ4_0Ref(const BlockQ4_0* x, float* y, int64_t n);
void DequantizeQ5_0Ref(const BlockQ5_0* x, float* y, int64_t n);
void DequantizeIQ4_NLRef(const BlockIQ4_NL* x, float* y, int64_t n);  // iq4_xs_ref.cc
void DequantizeMXFP4Ref(const BlockMXFP4* x, float* y, int64_t n);    // mxfp4_ref.cc
// Element j (0..31) of a Q5_0 block as its signed quant q - 16 in -16..15 (BlockQ5_0).
int Q5_0Quant(const BlockQ5_0& b, int j);
void DequantizeQ4_KRef(const BlockQ4_K* x, float* y, int64_t n);
void DequantizeQ5_KRef(const BlockQ5_K* x, float* y, int64_t n);
void DequantizeQ6_KRef(const BlockQ6_K* x, float* y, int64_t n);
void DequantizeIQ4_XSRef(const BlockIQ4_XS* x, float* y, int64_t n);  // iq4_xs_ref.cc
// ls_s - 32 of IQ4_XS sub-block s (0..7): the signed scale in -32..31 (BlockIQ4_XS).
int Iq4XsScale(const BlockIQ4_XS& b, int s);

// Dispatches on `type` (F32 is a copy). x holds n elements of that type (n a multiple of its block
// size); y: [n]. Returns false, writing nothing, for a type with no routine here.
bool DequantizeRef(DType type, const void* x, float* y, int64_t n);

// ggml's reference quantizers (quantize_row_q8_0_ref / quantize_row_q4_0_ref), bit for bit:
//   Q8_0: d = amax / 127, q = round(x / d) (half away from zero).
//   Q4_0: d = max / -8 where max is the element of largest magnitude (sign kept),
//         q = min(15, trunc(x / d + 8.5)).
//   Q5_0 (quantize_row_q5_0_ref): d = max / -16, q = min(31, trunc(x / d + 16.5)).
// x: [n] with n a multiple of 32; y: [n / 32] blocks.
void QuantizeQ8_0Ref(const float* x, BlockQ8_0* y, int64_t n);
void QuantizeQ4_0Ref(const float* x, BlockQ4_0* y, int64_t n);
void QuantizeQ5_0Ref(const float* x, BlockQ5_0* y, int64_t n);

// K-quant quantizers (smallmind's own, not ggml's bit for bit; blocks read back by the
// dequantizers above). x: [n] with n a multiple of 256; y: [n / 256] blocks. Inputs are clamped
// to a range the fp16 super-block scales can reach, so any finite input (and inf) gives finite
// blocks; all-zero input gives all-zero output.
//   Q4_K: each sub-block of 32 fits x ~ s * q - m (q in 0..15, m >= 0) by least squares over a
//         few candidate steps; d = max s / 63 and dmin = max m / 63 in fp16; s and m rounded to
//         6 bits against them; then every q rounded against the quantized s and m.
//   Q5_K: Q4_K's fit with q in 0..31.
//   Q6_K: each sub-block of 16 fits x ~ s * q (q in -32..31, s signed) the same way; d =
//         max |s| / 127 in fp16, s rounded to int8, then every q against the quantized s.
void QuantizeQ4_KRef(const float* x, BlockQ4_K* y, int64_t n);
void QuantizeQ5_KRef(const float* x, BlockQ5_K* y, int64_t n);
void QuantizeQ6_KRef(const float* x, BlockQ6_K* y, int64_t n);
// The 256 biased quants q: [256] (0..63, element order) into y's ql and qh (y's scales and d
// untouched): the layout DequantizeQ6_KRef reads.
void PackQ6_KQuants(const uint8_t* q, BlockQ6_K* y);
// IQ4_XS (smallmind's own, iq4_xs_ref.cc): each sub-block of 32 fits x ~ s * level (s signed,
// levels kIq4NlValues) by least squares over candidate scales that put its element of largest
// magnitude on the lowest or highest level; d = max |s| / 31 in fp16, s rounded to -32..31
// against it, then every index the level nearest x / (d * s). Inputs clamped to +-1e9, NaN as 0.
void QuantizeIQ4_XSRef(const float* x, BlockIQ4_XS* y, int64_t n);
// IQ4_NL (smallmind's own, iq4_xs_ref.cc): IQ4_XS's sub-block fit per block of 32, its scale
// stored straight as the block's fp16 d (capped at +-65504), then every index the level nearest
// x / d. n a multiple of 32; y: [n / 32] blocks.
void QuantizeIQ4_NLRef(const float* x, BlockIQ4_NL* y, int64_t n);
// MXFP4 (ggml's quantize_row_mxfp4_ref bit for bit, mxfp4_ref.cc): e = floor(log2(amax)) - 2 +
// 127 per block of 32 (0 for an all-zero block), every code the one whose value times 2^(e - 128)
// is nearest x (the first of equals). n a multiple of 32; y: [n / 32] blocks.
void QuantizeMXFP4Ref(const float* x, BlockMXFP4* y, int64_t n);

}  // namespace smallmind::kernels
