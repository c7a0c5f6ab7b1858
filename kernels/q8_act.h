// The Q8 activation row: activations quantized per 32 for the parallel path's integer matmuls
// (ggml's block_q8_1 for activations). Written by KernelTable::quantize_q8, read by matmuls whose
// input is MatmulInput::kQ8. Plain layout helpers; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace smallmind::kernels {

inline constexpr int kQ8ActBlock = 32;  // elements per scale

// A row of n activations (n a multiple of 32), in this order:
//   int8_t qs[n]     quants in [-127, 127]: x[i] ~= qs[i] * d[i / 32]
//   float  d[n / 32]  per-block scale (amax / 127)
//   float  s[n / 32]  d * (sum of the block's quants), for weight formats with an offset (Q4_0's
//                     -8): sum_i (q_w - 8) * q_x * d_w * d = d_w * (d * isum) - 8 * d_w * s
// padded to a multiple of 64 bytes so consecutive rows stay cache-line aligned.
constexpr size_t Q8ActRowBytes(int n) {
  const size_t raw = static_cast<size_t>(n) + 8 * static_cast<size_t>(n / 32);
  return (raw + 63) / 64 * 64;
}

inline const int8_t* Q8ActQuants(const void* row) { return static_cast<const int8_t*>(row); }
inline const float* Q8ActScales(const void* row, int n) {
  return reinterpret_cast<const float*>(static_cast<const int8_t*>(row) + n);
}
inline const float* Q8ActSums(const void* row, int n) { return Q8ActScales(row, n) + n / 32; }

}  // namespace smallmind::kernels
