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
//   int32_t qsum[n / 32]  the sum of the block's quants, exact, for integer cores that offset the
//                     weights instead (VNNI's u8 x s8 dot product takes q_w + 128: sum_i (q_w +
//                     128) * q_x - 128 * qsum = the exact dot product)
// padded to a multiple of 64 bytes so consecutive rows stay cache-line aligned.
inline constexpr size_t Q8ActRowDataBytes(int n) {  // the fields above without the padding
  return static_cast<size_t>(n) + 12 * static_cast<size_t>(n / 32);
}
constexpr size_t Q8ActRowBytes(int n) { return (Q8ActRowDataBytes(n) + 63) / 64 * 64; }

inline const int8_t* Q8ActQuants(const void* row) { return static_cast<const int8_t*>(row); }
inline const float* Q8ActScales(const void* row, int n) {
  return reinterpret_cast<const float*>(static_cast<const int8_t*>(row) + n);
}
inline const float* Q8ActSums(const void* row, int n) { return Q8ActScales(row, n) + n / 32; }
inline const int32_t* Q8ActQuantSums(const void* row, int n) {
  return reinterpret_cast<const int32_t*>(Q8ActSums(row, n) + n / 32);
}

}  // namespace smallmind::kernels
