// The Q8 activation row: activations quantized per 32 for the integer matmuls, in one of the
// schemes MatmulInput names (kQ8: llama.cpp's q8_0, d rounded to fp16; kQ8_1: q8_1, s rounded to
// fp16 too; kQ8K: q8_K, one scale per 256 written into its 8 blocks). Written by the table's
// quantize_q8 / quantize_q8_1 / quantize_q8_k, read by the matmuls whose input names that scheme.
// Plain layout helpers; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace smallmind::kernels {

inline constexpr int kQ8ActBlock = 32;  // elements per scale

// A row of n activations (n a multiple of 32), in this order:
//   int8_t qs[n]     quants in [-127, 127]: x[i] ~= qs[i] * d[i / 32]
//   float  d[n / 32]  per-block scale: kQ8 and kQ8_1 fp16(amax / 127) (the quants are
//                     round-half-even(x * (127 / amax)), as llama.cpp's q8_0 makes them); kQ8K
//                     the 256-block's -max / 127 (max the element of largest |x|: negative d
//                     when it is, with quants of the opposite sign) in each of its 8 blocks
//   float  s[n / 32]  d * (sum of the block's quants), exact for kQ8 (an fp16 value times an
//                     integer below 2^12), for weight formats with an offset (Q4_0's -8):
//                     sum_i (q_w - 8) * q_x * d_w * d = d_w * (d * isum) - 8 * d_w * s; kQ8_1:
//                     fp16((amax / 127) * sum), the s llama.cpp's q8_1 gives Q4_1 / Q5_1
//   int32_t qsum[n / 32]  the sum of the block's quants, exact, for integer cores that offset the
//                     weights instead (VNNI's u8 x s8 dot product takes q_w + 128: sum_i (q_w +
//                     128) * q_x - 128 * qsum = the exact dot product); kQ8K rows hold in these
//                     bytes int16_t bsum[n / 16] instead, the sum of each 16 quants (llama.cpp's
//                     q8_K bsums; |sum| <= 16 * 127), for the K-quants' 16-element sub-blocks
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
// kQ8K rows: the sums of each 16 quants, in the bytes of the other schemes' qsum.
inline const int16_t* Q8ActSums16(const void* row, int n) {
  return reinterpret_cast<const int16_t*>(Q8ActQuantSums(row, n));
}

// Q8 activation octets: the Q8 rows of n > 1 tokens regrouped 8 tokens at a time, for the matmuls
// whose input is MatmulInput::kQ8Octets (the 512-bit Q8_0 / Q4_0 tiles, kernels/avx512/
// x16_zmm.h). A tile of up to 8 tokens then reads every token's quants, scales and sums from one
// pointer each at fixed offsets; from rows it needs four pointers a token, more than x86-64's 16
// general registers hold for 8 tokens (GCC spilled them and the loop counters: the 1 x 8 tile ran
// at ~55% of what its vpdpbusd chain allows). Octet o holds tokens 8o .. 8o + 7; with nb = n_dim /
// 32 blocks, the O = ceil(n / 8) octets follow each other, each in this order:
//   int32_t q[nb][8][8]  quants 4k .. 4k + 3 of block b of token 8o + j at [b][k][j]
//   float   d[nb][8]     the row's d[b] of token 8o + j at [b][j]
//   float   s[nb][8]     the row's s[b]
//   int32_t c[nb][8]     -128 * the row's qsum[b]: the VNNI cores' start (see the row above)
// Lanes past the last token hold zeros. Every value is the row's: a kernel reading octets
// computes the bits it computes from rows.
inline constexpr int kQ8ActOctet = 8;  // tokens per octet
constexpr size_t Q8ActOctetsBytes(int n_tokens, int n_dim) {
  return static_cast<size_t>((n_tokens + kQ8ActOctet - 1) / kQ8ActOctet) * (n_dim / 32) *
         (kQ8ActOctet * (32 + 3 * 4));
}
// Token t's lane of block 0 of its octet; the lane of token t + i (same octet) of block b is
// i + b * 8 further (q: b * 64 + k * 8 + i).
struct Q8ActOctetLane {
  const int32_t* q;
  const float* d;
  const float* s;
  const int32_t* c;
};
inline Q8ActOctetLane Q8ActOctetLaneOf(const void* octets, int n_dim, int t) {
  const size_t nb = static_cast<size_t>(n_dim / 32);
  const size_t o = static_cast<size_t>(t / kQ8ActOctet), j = static_cast<size_t>(t % kQ8ActOctet);
  const auto* base = static_cast<const uint8_t*>(octets) + o * nb * kQ8ActOctet * (32 + 12);
  const auto* q = reinterpret_cast<const int32_t*>(base);
  const auto* d = reinterpret_cast<const float*>(q + nb * 64);
  const float* s = d + nb * kQ8ActOctet;
  const auto* c = reinterpret_cast<const int32_t*>(s + nb * kQ8ActOctet);
  return Q8ActOctetLane{q + j, d + j, s + j, c + j};
}
// Octet o's arrays to write (the layout above), for the packers (kernels/ref/quantize_ref.h
// PackQ8ActOctetsRef, the definition; the SIMD quantizers).
struct Q8ActOctetOut {
  int32_t* q;
  float* d;
  float* s;
  int32_t* c;
};
inline Q8ActOctetOut Q8ActOctetOutOf(void* octets, int n_dim, int o) {
  const Q8ActOctetLane lane = Q8ActOctetLaneOf(octets, n_dim, o * kQ8ActOctet);
  return Q8ActOctetOut{const_cast<int32_t*>(lane.q), const_cast<float*>(lane.d),
                       const_cast<float*>(lane.s), const_cast<int32_t*>(lane.c)};
}
}  // namespace smallmind::kernels
