// Quantized block layouts bit-compatible with GGUF/ggml (ggml-common.h block_q8_0, block_q4_0,
// block_q5_0, block_iq4_nl, block_q4_K, block_q5_K, block_q6_K, block_iq4_xs, block_mxfp4) and
// the scalar fp16/bf16 <-> fp32 conversions they need. Used by loaders, the model generator and
// every quantized kernel. Plain data and pure functions; thread-safe.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

namespace smallmind::kernels {

static_assert(std::endian::native == std::endian::little, "GGUF blocks are read as little-endian");

inline constexpr int kQk8_0 = 32;  // elements per Q8_0 block
inline constexpr int kQk4_0 = 32;  // elements per Q4_0 block
inline constexpr int kQkK = 256;   // elements per K-quant super-block
inline constexpr int kKScaleSize = 12;

// x[i] = qs[i] * d.
struct BlockQ8_0 {
  uint16_t d;         // fp16 scale
  int8_t qs[kQk8_0];  // quants
};

// x[j] = ((qs[j] & 0xF) - 8) * d and x[j + 16] = ((qs[j] >> 4) - 8) * d for j < 16.
struct BlockQ4_0 {
  uint16_t d;              // fp16 scale
  uint8_t qs[kQk4_0 / 2];  // nibbles: low = elements 0..15, high = 16..31
};

// Q4_0 with a fifth bit: x[j] = (((qs[j] & 0xF) | b_j << 4) - 16) * d and x[j + 16] =
// (((qs[j] >> 4) | b_(j+16) << 4) - 16) * d for j < 16, b_i bit i of the little-endian uint32 qh.
struct BlockQ5_0 {
  uint16_t d;              // fp16 scale
  uint8_t qh[4];           // fifth bits of the 32 quants
  uint8_t qs[kQk4_0 / 2];  // low 4 bits, as Q4_0's qs
};

// 8 sub-blocks of 32. Sub-block s has a 6-bit scale sc_s and a 6-bit min m_s packed in `scales`;
// x = d * sc_s * q - dmin * m_s with q the 4-bit quant. The 64 elements [64k, 64k + 64) take the
// low nibbles (sub-block 2k) then the high nibbles (sub-block 2k + 1) of qs[32k .. 32k + 32).
struct BlockQ4_K {
  uint16_t d;                   // fp16 super-block scale of the scales
  uint16_t dmin;                // fp16 super-block scale of the mins
  uint8_t scales[kKScaleSize];  // 6-bit scales and mins of the 8 sub-blocks
  uint8_t qs[kQkK / 2];         // 4-bit quants
};

// Q4_K with a fifth bit: x = d * sc_s * q - dmin * m_s with q = nibble | (bit s of qh[l]) << 4
// in 0..31, where element l of a group of 64 (l < 32: sub-block 2k, else 2k + 1, l taken mod 32)
// takes its nibble as Q4_K does and its high bit from qh[l mod 32], bit 2k or 2k + 1.
struct BlockQ5_K {
  uint16_t d;                   // fp16 super-block scale of the scales
  uint16_t dmin;                // fp16 super-block scale of the mins
  uint8_t scales[kKScaleSize];  // 6-bit scales and mins, packed as Q4_K's
  uint8_t qh[kQkK / 8];         // high bits: bit s of qh[l] for element l of sub-block s
  uint8_t qs[kQkK / 2];         // low 4 bits, as Q4_K's qs
};

// 16 sub-blocks of 16 with int8 scales; x = d * scales[s] * (q - 32), q a 6-bit quant made of 4 low
// bits in ql and 2 high bits in qh (layout in kernels/ref/dequant_ref.cc).
struct BlockQ6_K {
  uint8_t ql[kQkK / 2];      // quants, low 4 bits
  uint8_t qh[kQkK / 4];      // quants, high 2 bits
  int8_t scales[kQkK / 16];  // sub-block scales
  uint16_t d;                // fp16 super-block scale
};

// The 16 levels of the non-linear 4-bit types (ggml's kvalues_iq4nl), ascending: a 4-bit index
// q stands for kIq4NlValues[q].
inline constexpr int8_t kIq4NlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

// One block of 32 of the non-linear 4-bit levels: x[j] = d * kIq4NlValues[qs[j] & 0xF] and
// x[j + 16] = d * kIq4NlValues[qs[j] >> 4] for j < 16.
struct BlockIQ4_NL {
  uint16_t d;              // fp16 scale
  uint8_t qs[kQk4_0 / 2];  // 4-bit indices into kIq4NlValues, as Q4_0's nibbles
};

// 8 sub-blocks of 32 with unsigned 6-bit scales ls_s (0..63); x = d * (ls_s - 32) *
// kIq4NlValues[q]. ls_s: low 4 bits from nibble s % 2 of scales_l[s / 2], high 2 bits from bits
// 2s, 2s + 1 of scales_h. Sub-block s reads qs[16s .. 16s + 16): low nibbles are its elements
// 0..15, high nibbles 16..31.
struct BlockIQ4_XS {
  uint16_t d;                   // fp16 super-block scale
  uint16_t scales_h;            // high 2 bits of the 8 scales
  uint8_t scales_l[kQkK / 64];  // low 4 bits of the 8 scales
  uint8_t qs[kQkK / 2];         // 4-bit indices into kIq4NlValues
};

// The 16 E2M1 (fp4) values doubled to integers (ggml's kvalues_mxfp4): code c stands for
// kMxfp4Values[c]; bit 3 is the sign (code 8 is -0, read as 0).
inline constexpr int8_t kMxfp4Values[16] = {0, 1,  2,  3,  4,  6,  8,  12,
                                            0, -1, -2, -3, -4, -6, -8, -12};

// One MXFP4 block of 32 (ggml's block_mxfp4, GGUF type 39): x[j] = 2^(e - 128) *
// kMxfp4Values[qs[j] & 0xF] and x[j + 16] = 2^(e - 128) * kMxfp4Values[qs[j] >> 4] for j < 16.
// The E8M0 scale is 2^(e - 127); the levels are doubled, so the block scale is half of it.
struct BlockMXFP4 {
  uint8_t e;               // E8M0 shared exponent
  uint8_t qs[kQk4_0 / 2];  // 4-bit E2M1 codes, as Q4_0's nibbles
};

// 2^(e - 128), exact for every e (e < 2 as float subnormals): the MXFP4 block scale.
inline float E8M0HalfToFp32(uint8_t e) {
  const uint32_t bits = e < 2 ? 0x00200000u << e : static_cast<uint32_t>(e - 1) << 23;
  return std::bit_cast<float>(bits);
}

static_assert(sizeof(BlockMXFP4) == 17 && std::is_trivially_copyable_v<BlockMXFP4>);
static_assert(sizeof(BlockQ8_0) == 34 && std::is_trivially_copyable_v<BlockQ8_0>);
static_assert(sizeof(BlockQ4_0) == 18 && std::is_trivially_copyable_v<BlockQ4_0>);
static_assert(sizeof(BlockQ5_0) == 22 && std::is_trivially_copyable_v<BlockQ5_0>);
static_assert(sizeof(BlockIQ4_NL) == 18 && std::is_trivially_copyable_v<BlockIQ4_NL>);
static_assert(sizeof(BlockQ4_K) == 144 && std::is_trivially_copyable_v<BlockQ4_K>);
static_assert(sizeof(BlockQ5_K) == 176 && std::is_trivially_copyable_v<BlockQ5_K>);
static_assert(sizeof(BlockQ6_K) == 210 && std::is_trivially_copyable_v<BlockQ6_K>);
static_assert(sizeof(BlockIQ4_XS) == 136 && std::is_trivially_copyable_v<BlockIQ4_XS>);
static_assert(alignof(BlockQ8_0) == 2 && alignof(BlockQ4_0) == 2 && alignof(BlockQ4_K) == 2 &&
              alignof(BlockQ5_K) == 2 && alignof(BlockQ6_K) == 2 && alignof(BlockIQ4_XS) == 2 &&
              alignof(BlockQ5_0) == 2 && alignof(BlockIQ4_NL) == 2);

// IEEE binary16 -> binary32; exact for every input (subnormals, inf, NaN payloads kept).
inline float Fp16ToFp32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24, exact in float
    const float mag = static_cast<float>(mant) * 0x1p-24f;
    return sign ? -mag : mag;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));  // inf / NaN
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));  // rebias 15 -> 127
}

// binary32 -> binary16 with round-to-nearest-even (as F16C's vcvtps2ph with the default mode).
// Overflow gives inf, tiny values give signed zero or a subnormal, NaN stays a (quiet) NaN.
inline uint16_t Fp32ToFp16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return sign | 0x7e00u | static_cast<uint16_t>((abs >> 13) & 0x3ffu);
  const int exp = static_cast<int>(abs >> 23) - 127;  // unbiased
  if (exp >= 16) return sign | 0x7c00u;               // >= 2^16 (and inf): inf
  uint32_t mant = abs & 0x7fffffu;
  uint32_t shift;    // bits of the 24-bit significand dropped
  uint32_t h;        // truncated half, exponent field included
  if (exp >= -14) {  // normal half
    shift = 13;
    h = (static_cast<uint32_t>(exp + 15) << 10) | (mant >> 13);
  } else {
    if (exp < -25) return sign;  // below half the smallest subnormal: rounds to zero
    mant |= 0x800000u;           // implicit bit; the half is mant * 2^(exp + 1) units of 2^-24
    shift = static_cast<uint32_t>(-exp - 1);
    h = mant >> shift;
  }
  const uint32_t rem = mant & ((1u << shift) - 1);
  const uint32_t halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (h & 1u))) h++;  // a carry may roll into exponent / inf
  return sign | static_cast<uint16_t>(h);
}

// bfloat16 -> binary32: the top 16 bits of the float.
inline float Bf16ToFp32(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

// binary32 -> bfloat16 with round-to-nearest-even; NaN stays a quiet NaN.
inline uint16_t Fp32ToBf16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace smallmind::kernels
