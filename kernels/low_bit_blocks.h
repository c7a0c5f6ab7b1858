// The GGUF block layouts of the low-bit types Q4_1, Q5_1, Q2_K and Q3_K, bit-compatible with ggml
// (ggml-common.h block_q4_1, block_q5_1, block_q2_K, block_q3_K), and the element accessors every
// reader of them shares. Used by the reference kernels, the packers and the model generator. Plain
// data and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/quant_blocks.h"

namespace smallmind::kernels {

// x[j] = (qs[j] & 0xF) * d + m and x[j + 16] = (qs[j] >> 4) * d + m for j < 16.
struct BlockQ4_1 {
  uint16_t d;              // fp16 scale
  uint16_t m;              // fp16 min (the value of quant 0)
  uint8_t qs[kQk4_0 / 2];  // nibbles, as Q4_0's
};

// Q4_1 with a fifth bit: x[i] = q_i * d + m with q_i = nibble | (bit i of the little-endian uint32
// qh) << 4 in 0..31, nibbles as Q4_0's (BlockQ5_0's bit layout).
struct BlockQ5_1 {
  uint16_t d;              // fp16 scale
  uint16_t m;              // fp16 min
  uint8_t qh[4];           // fifth bits of the 32 quants
  uint8_t qs[kQk4_0 / 2];  // low 4 bits
};

// 16 sub-blocks of 16: element e of the super-block has the 2-bit quant q = (qs[32 (e / 128) +
// e % 32] >> (2 * (e % 128 / 32))) & 3 and sub-block s = e / 16, whose byte scales[s] holds a
// 4-bit scale (low nibble) and a 4-bit min (high nibble): x = d * sc_s * q - dmin * m_s.
struct BlockQ2_K {
  uint8_t scales[kQkK / 16];  // 4-bit scales and mins
  uint8_t qs[kQkK / 4];       // 2-bit quants
  uint16_t d;                 // fp16 super-block scale of the scales
  uint16_t dmin;              // fp16 super-block scale of the mins
};

// 16 sub-blocks of 16 with 6-bit scales: x = d * (sc_s - 32) * q, q in -4..3 = the 2-bit value
// laid out as Q2_K's qs, less 4 unless bit (e % 128 / 32 + 4 (e / 128)) of hmask[e % 32] is set.
// sc_s: low 4 bits from scales[s] (s < 8) or scales[s - 8] >> 4, high 2 bits from bits 2 (s / 4),
// 2 (s / 4) + 1 of scales[8 + s % 4].
struct BlockQ3_K {
  uint8_t hmask[kQkK / 8];  // high bits (set: no -4)
  uint8_t qs[kQkK / 4];     // low 2 bits
  uint8_t scales[12];       // 6-bit scales, packed
  uint16_t d;               // fp16 super-block scale
};

static_assert(sizeof(BlockQ4_1) == 20 && std::is_trivially_copyable_v<BlockQ4_1>);
static_assert(sizeof(BlockQ5_1) == 24 && std::is_trivially_copyable_v<BlockQ5_1>);
static_assert(sizeof(BlockQ2_K) == 84 && std::is_trivially_copyable_v<BlockQ2_K>);
static_assert(sizeof(BlockQ3_K) == 110 && std::is_trivially_copyable_v<BlockQ3_K>);
static_assert(alignof(BlockQ4_1) == 2 && alignof(BlockQ5_1) == 2 && alignof(BlockQ2_K) == 2 &&
              alignof(BlockQ3_K) == 2);

// Element j (0..31) of a Q4_1 / Q5_1 block as its unsigned quant (0..15 / 0..31).
inline int Q4_1Quant(const BlockQ4_1& b, int j) {
  return j < 16 ? b.qs[j] & 0x0f : b.qs[j - 16] >> 4;
}
inline int Q5_1Quant(const BlockQ5_1& b, int j) {
  const uint32_t qh = uint32_t{b.qh[0]} | uint32_t{b.qh[1]} << 8 | uint32_t{b.qh[2]} << 16 |
                      uint32_t{b.qh[3]} << 24;
  const int nibble = j < 16 ? b.qs[j] & 0x0f : b.qs[j - 16] >> 4;
  return nibble | static_cast<int>((qh >> j) & 1u) << 4;
}

// Element e (0..255) of a Q2_K / Q3_K super-block: its 2-bit field of qs.
inline int K2BitField(const uint8_t* qs, int e) {
  return (qs[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32))) & 3;
}
// Q3_K element e as its signed quant in -4..3.
inline int Q3_KQuant(const BlockQ3_K& b, int e) {
  const int bit = e % 128 / 32 + 4 * (e / 128);
  return K2BitField(b.qs, e) - (((b.hmask[e % 32] >> bit) & 1) ? 0 : 4);
}
// Q3_K sub-block s (0..15) as its signed scale sc_s - 32 in -32..31.
inline int Q3_KScale(const BlockQ3_K& b, int s) {
  const int low = s < 8 ? b.scales[s] & 0x0f : b.scales[s - 8] >> 4;
  const int high = (b.scales[8 + s % 4] >> (2 * (s / 4))) & 3;
  return (low | high << 4) - 32;
}

}  // namespace smallmind::kernels
