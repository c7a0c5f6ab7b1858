// Scalar reference dequantization (every GGUF tensor type smallmind reads -> f32) and the ggml
// reference quantizers for Q8_0 and Q4_0 (used by the model generator). The oracles that SIMD
// dequant/matmul variants are tested against. Pure functions; thread-safe on disjoint outputs.
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
void DequantizeQ4_KRef(const BlockQ4_K* x, float* y, int64_t n);
void DequantizeQ6_KRef(const BlockQ6_K* x, float* y, int64_t n);

// Dispatches on `type` (F32 is a copy). x holds n elements of that type (n a multiple of its block
// size); y: [n]. Returns false, writing nothing, for a type with no routine here.
bool DequantizeRef(DType type, const void* x, float* y, int64_t n);

// ggml's reference quantizers (quantize_row_q8_0_ref / quantize_row_q4_0_ref), bit for bit:
//   Q8_0: d = amax / 127, q = round(x / d) (half away from zero).
//   Q4_0: d = max / -8 where max is the element of largest magnitude (sign kept),
//         q = min(15, trunc(x / d + 8.5)).
// x: [n] with n a multiple of 32; y: [n / 32] blocks.
void QuantizeQ8_0Ref(const float* x, BlockQ8_0* y, int64_t n);
void QuantizeQ4_0Ref(const float* x, BlockQ4_0* y, int64_t n);

}  // namespace smallmind::kernels
