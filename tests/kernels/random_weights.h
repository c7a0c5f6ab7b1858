// Test helpers for kernel tests: seeded random float vectors and random weight matrices of every
// weight type (valid scales, random quants), plus their reference dequantization. Header-only;
// thread-compatible.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/kernels.h"
#include "kernels/low_bit_blocks.h"
#include "kernels/q8_act.h"
#include "kernels/quant_blocks.h"
#include "kernels/ref/dequant_ref.h"
#include "kernels/ref/low_bit_ref.h"
#include "kernels/ref/quantize_ref.h"

namespace smallmind::kernels::testing {

inline std::vector<float> RandomFloats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// A [rows, cols] matrix of `type` with seeded random content: float types from uniform values,
// Q8_0/Q4_0/Q5_0/IQ4_NL/Q4_1/Q5_1/MXFP4 through the reference quantizers, K-quants from random
// quant bytes with fp16 scales drawn from a sane range (no inf/NaN).
inline std::vector<uint8_t> RandomWeights(DType type, int rows, int cols, uint32_t seed) {
  const DTypeTraits& traits = *GetDTypeTraits(static_cast<uint32_t>(type));
  const size_t row_bytes = RowBytes(traits, cols);
  std::vector<uint8_t> bytes(row_bytes * rows);
  const std::vector<float> values = RandomFloats(static_cast<size_t>(rows) * cols, seed);
  std::mt19937 rng(seed + 1);
  std::uniform_real_distribution<float> scale(0.001f, 0.05f);
  for (int r = 0; r < rows; r++) {
    uint8_t* row = bytes.data() + row_bytes * r;
    const float* v = values.data() + static_cast<size_t>(r) * cols;
    switch (type) {
      case DType::kF32: std::memcpy(row, v, row_bytes); break;
      case DType::kF16:
      case DType::kBF16:
        for (int i = 0; i < cols; i++) {
          const uint16_t h = type == DType::kF16 ? Fp32ToFp16(v[i]) : Fp32ToBf16(v[i]);
          std::memcpy(row + 2 * i, &h, 2);
        }
        break;
      case DType::kQ8_0: QuantizeQ8_0Ref(v, reinterpret_cast<BlockQ8_0*>(row), cols); break;
      case DType::kQ4_0: QuantizeQ4_0Ref(v, reinterpret_cast<BlockQ4_0*>(row), cols); break;
      case DType::kQ5_0: QuantizeQ5_0Ref(v, reinterpret_cast<BlockQ5_0*>(row), cols); break;
      case DType::kIQ4_NL: QuantizeIQ4_NLRef(v, reinterpret_cast<BlockIQ4_NL*>(row), cols); break;
      case DType::kMXFP4: QuantizeMXFP4Ref(v, reinterpret_cast<BlockMXFP4*>(row), cols); break;
      case DType::kQ4_1: QuantizeQ4_1Ref(v, reinterpret_cast<BlockQ4_1*>(row), cols); break;
      case DType::kQ5_1: QuantizeQ5_1Ref(v, reinterpret_cast<BlockQ5_1*>(row), cols); break;
      case DType::kQ4_K:
      case DType::kQ5_K:
      case DType::kQ6_K:
      case DType::kIQ4_XS:
      case DType::kQ2_K:
      case DType::kQ3_K: {
        for (size_t i = 0; i < row_bytes; i++) row[i] = static_cast<uint8_t>(rng());
        for (int b = 0; b < cols / kQkK; b++) {
          if (type == DType::kQ2_K) {
            reinterpret_cast<BlockQ2_K*>(row)[b].d = Fp32ToFp16(scale(rng));
            reinterpret_cast<BlockQ2_K*>(row)[b].dmin = Fp32ToFp16(scale(rng));
          } else if (type == DType::kQ3_K) {
            reinterpret_cast<BlockQ3_K*>(row)[b].d = Fp32ToFp16(scale(rng));
          } else if (type == DType::kQ4_K || type == DType::kQ5_K) {  // both open with d, dmin
            auto* blk = reinterpret_cast<uint16_t*>(row + b * traits.block_bytes);
            blk[0] = Fp32ToFp16(scale(rng));
            blk[1] = Fp32ToFp16(scale(rng));
          } else if (type == DType::kIQ4_XS) {
            reinterpret_cast<BlockIQ4_XS*>(row)[b].d = Fp32ToFp16(scale(rng));
          } else {
            reinterpret_cast<BlockQ6_K*>(row)[b].d = Fp32ToFp16(scale(rng));
          }
        }
        break;
      }
    }
  }
  return bytes;
}

// The reference dequantization of a whole RandomWeights matrix: [rows, cols] floats.
inline std::vector<float> DequantizeAll(DType type, const std::vector<uint8_t>& w, int rows,
                                        int cols) {
  std::vector<float> out(static_cast<size_t>(rows) * cols);
  DequantizeRef(type, w.data(), out.data(), static_cast<int64_t>(rows) * cols);
  return out;
}

// What `op` reads as x for n_tokens Q8 rows xq (Q8ActRowBytes(in_dim) each): the rows, or for a
// kQ8Octets op and more than one token their octets.
inline std::vector<uint8_t> Q8InputFor(const MatmulOp& op, const uint8_t* xq, int n_tokens,
                                       int in_dim) {
  if (op.input != MatmulInput::kQ8Octets || n_tokens == 1) {
    return std::vector<uint8_t>(xq, xq + static_cast<size_t>(n_tokens) * Q8ActRowBytes(in_dim));
  }
  std::vector<uint8_t> octets(Q8ActOctetsBytes(n_tokens, in_dim));
  PackQ8ActOctetsRef(xq, octets.data(), in_dim, n_tokens, 0,
                     (n_tokens + kQ8ActOctet - 1) / kQ8ActOctet);
  return octets;
}

// The weights as `op` reads them: packed when it has a PackFn, else as given.
inline std::vector<uint8_t> Pack(const MatmulOp& op, const std::vector<uint8_t>& w, int rows,
                                 int cols) {
  if (op.pack == nullptr) return w;
  std::vector<uint8_t> packed(op.packed_bytes(rows, cols));
  op.pack(w.data(), packed.data(), rows, cols);
  return packed;
}

}  // namespace smallmind::kernels::testing
