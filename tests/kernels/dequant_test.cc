#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "kernels/quant_blocks.h"
#include "kernels/ref/dequant_ref.h"

namespace smallmind::kernels {
namespace {

TEST(Fp16Test, DecodesNormalsSubnormalsInfinitiesAndNans) {
  EXPECT_EQ(Fp16ToFp32(0x3c00), 1.0f);
  EXPECT_EQ(Fp16ToFp32(0xc000), -2.0f);
  EXPECT_EQ(Fp16ToFp32(0x7bff), 65504.0f);               // largest finite
  EXPECT_EQ(Fp16ToFp32(0x0400), std::ldexp(1.0f, -14));  // smallest normal
  EXPECT_EQ(Fp16ToFp32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(Fp16ToFp32(0x03ff), 1023 * std::ldexp(1.0f, -24));
  EXPECT_EQ(Fp16ToFp32(0x3555), 0.333251953125f);
  EXPECT_EQ(Fp16ToFp32(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(Fp16ToFp32(0xfc00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(Fp16ToFp32(0x7e00)));
  EXPECT_TRUE(std::isnan(Fp16ToFp32(0x7c01)));  // signalling payload stays a NaN
  EXPECT_TRUE(std::signbit(Fp16ToFp32(0x8000)));
  EXPECT_EQ(Fp16ToFp32(0x8000), 0.0f);
}

TEST(Fp16Test, EncodesWithRoundToNearestEven) {
  EXPECT_EQ(Fp32ToFp16(1.0f), 0x3c00);
  EXPECT_EQ(Fp32ToFp16(-2.0f), 0xc000);
  EXPECT_EQ(Fp32ToFp16(65504.0f), 0x7bff);
  EXPECT_EQ(Fp32ToFp16(65519.0f), 0x7bff);  // below the midpoint to 65536
  EXPECT_EQ(Fp32ToFp16(65520.0f), 0x7c00);  // the midpoint ties to even: infinity
  EXPECT_EQ(Fp32ToFp16(1e10f), 0x7c00);
  EXPECT_EQ(Fp32ToFp16(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(Fp32ToFp16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie, 0x3c00 is even
  EXPECT_EQ(Fp32ToFp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie, 0x3c02 is even
  EXPECT_EQ(Fp32ToFp16(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);
  EXPECT_EQ(Fp32ToFp16(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(Fp32ToFp16(std::ldexp(1.0f, -25)), 0x0000);      // tie with zero: even
  EXPECT_EQ(Fp32ToFp16(std::ldexp(1.01f, -25)), 0x0001);     // just above the tie
  EXPECT_EQ(Fp32ToFp16(3 * std::ldexp(1.0f, -25)), 0x0002);  // 1.5 units ties to 2
  EXPECT_EQ(Fp32ToFp16(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -25)), 0x0400);  // into normals
  EXPECT_EQ(Fp32ToFp16(1e-30f), 0x0000);
  EXPECT_EQ(Fp32ToFp16(-1e-30f), 0x8000);
  EXPECT_EQ(Fp32ToFp16(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(Fp32ToFp16(-0.0f), 0x8000);
  const uint16_t nan = Fp32ToFp16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
}

TEST(Fp16Test, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t h = 0; h <= 0xffff; h++) {
    const float f = Fp16ToFp32(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(Fp32ToFp16(f), h) << "half 0x" << std::hex << h;
  }
}

TEST(Fp16Test, EncodingPicksTheNearestHalf) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> exponent(-26.0f, 15.99f);  // finite results only
  for (int i = 0; i < 200000; i++) {
    const float f = std::exp2(exponent(rng)) * (rng() & 1 ? 1.0f : -1.0f);
    const uint16_t h = Fp32ToFp16(f);
    const double err = std::fabs(static_cast<double>(f) - Fp16ToFp32(h));
    for (int delta : {-1, 1}) {  // neighbours in magnitude (same sign)
      const uint16_t n = static_cast<uint16_t>(h + delta);
      if ((n & 0x7fff) > 0x7bff || (n & 0x8000) != (h & 0x8000)) continue;
      ASSERT_LE(err, std::fabs(static_cast<double>(f) - Fp16ToFp32(n))) << f;
    }
  }
}

TEST(Bf16Test, ConvertsWithRoundToNearestEven) {
  EXPECT_EQ(Bf16ToFp32(0x3f80), 1.0f);
  EXPECT_EQ(Bf16ToFp32(0xc049), -3.140625f);
  EXPECT_EQ(Bf16ToFp32(0x7f80), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(Bf16ToFp32(0x7fc0)));
  EXPECT_EQ(Fp32ToBf16(1.0f), 0x3f80);
  EXPECT_EQ(Fp32ToBf16(std::bit_cast<float>(0x3f808000u)), 0x3f80);  // tie: even
  EXPECT_EQ(Fp32ToBf16(std::bit_cast<float>(0x3f818000u)), 0x3f82);  // tie: even
  EXPECT_EQ(Fp32ToBf16(std::bit_cast<float>(0x3f808001u)), 0x3f81);
  EXPECT_TRUE(std::isnan(Bf16ToFp32(Fp32ToBf16(std::numeric_limits<float>::quiet_NaN()))));
  const uint16_t in[3] = {0x3f80, 0xc049, 0x0000};
  float out[3];
  DequantizeBf16Ref(in, out, 3);
  EXPECT_EQ(out[1], -3.140625f);
}

TEST(DequantTest, F16RowDecodesEachElement) {
  const uint16_t in[4] = {0x3c00, 0xc000, 0x3800, 0x0001};
  float out[4];
  DequantizeF16Ref(in, out, 4);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -2.0f);
  EXPECT_EQ(out[2], 0.5f);
  EXPECT_EQ(out[3], std::ldexp(1.0f, -24));
}

TEST(DequantTest, Q8_0MultipliesEachQuantByTheScale) {
  BlockQ8_0 b[2] = {};
  b[0].d = 0x3800;  // 0.5
  b[1].d = 0xc400;  // -4
  for (int j = 0; j < 32; j++) {
    b[0].qs[j] = static_cast<int8_t>(j - 16);
    b[1].qs[j] = static_cast<int8_t>(j % 2 ? -128 : 127);
  }
  float y[64];
  DequantizeQ8_0Ref(b, y, 64);
  EXPECT_EQ(y[0], -8.0f);
  EXPECT_EQ(y[17], 0.5f);
  EXPECT_EQ(y[31], 7.5f);
  EXPECT_EQ(y[32], -508.0f);
  EXPECT_EQ(y[33], 512.0f);
}

TEST(DequantTest, Q4_0LowNibblesAreTheFirstHalfHighNibblesTheSecond) {
  BlockQ4_0 b = {};
  b.d = 0x4000;  // 2
  b.qs[0] = 0xf0;
  b.qs[5] = 0x83;
  b.qs[15] = 0x7f;
  float y[32];
  DequantizeQ4_0Ref(&b, y, 32);
  EXPECT_EQ(y[0], (0 - 8) * 2.0f);
  EXPECT_EQ(y[16], (15 - 8) * 2.0f);
  EXPECT_EQ(y[5], (3 - 8) * 2.0f);
  EXPECT_EQ(y[21], 0.0f);
  EXPECT_EQ(y[15], (15 - 8) * 2.0f);
  EXPECT_EQ(y[31], (7 - 8) * 2.0f);
  EXPECT_EQ(y[1], -16.0f);  // a zero byte is -8 * d in both halves
  EXPECT_EQ(y[17], -16.0f);
}

// Scales and mins of the 8 Q4_K sub-blocks, packed by hand into the 12 bytes as the format defines:
// bytes 0-3: low 6 bits = scale of sub-blocks 0-3, top 2 bits = bits 4-5 of the scale of 4-7;
// bytes 4-7: low 6 bits = min of sub-blocks 0-3, top 2 bits = bits 4-5 of the min of 4-7;
// bytes 8-11: low nibble = bits 0-3 of the scale of 4-7, high nibble = bits 0-3 of its min.
// scales = {1, 2, 3, 4, 33, 10, 63, 16}, mins = {0, 5, 7, 1, 40, 2, 63, 17}.
constexpr uint8_t kQ4KScales[12] = {
    0x81,  // 1 | (33 >> 4) << 6
    0x02,  // 2 | (10 >> 4) << 6
    0xc3,  // 3 | (63 >> 4) << 6
    0x44,  // 4 | (16 >> 4) << 6
    0x80,  // 0 | (40 >> 4) << 6
    0x05,  // 5 | (2 >> 4) << 6
    0xc7,  // 7 | (63 >> 4) << 6
    0x41,  // 1 | (17 >> 4) << 6
    0x81,  // (33 & 15) | (40 & 15) << 4
    0x2a,  // (10 & 15) | (2 & 15) << 4
    0xff,  // (63 & 15) | (63 & 15) << 4
    0x10,  // (16 & 15) | (17 & 15) << 4
};

// A Q4_K or Q5_K block with d = 1, dmin = 0.5, kQ4KScales and nibbles l % 16 (low), 15 - l % 16.
template <typename Block>
Block ScaleMinTestBlock() {
  Block b = {};
  b.d = 0x3c00;     // 1
  b.dmin = 0x3800;  // 0.5
  std::memcpy(b.scales, kQ4KScales, sizeof(kQ4KScales));
  for (int l = 0; l < 128; l++) b.qs[l] = static_cast<uint8_t>((l % 16) | ((15 - l % 16) << 4));
  return b;
}

// Every element of a ScaleMinTestBlock's dequantization y: [256] against the format's definition
// (element e: group g = e / 64 reads qs[32g .. 32g + 31], low nibbles for sub-block 2g, high for
// 2g + 1; Q5_K's qh adds bit `sub` of qh[e % 32] as 16).
void ExpectScaleMinElements(const float* y, const uint8_t* qs, const uint8_t* qh) {
  const int scale[8] = {1, 2, 3, 4, 33, 10, 63, 16};
  const int min[8] = {0, 5, 7, 1, 40, 2, 63, 17};
  for (int e = 0; e < 256; e++) {
    const int g = e / 64, p = e % 64;
    const int sub = 2 * g + (p >= 32 ? 1 : 0);
    const uint8_t byte = qs[32 * g + p % 32];
    const int high = qh != nullptr ? 16 * ((qh[p % 32] >> sub) & 1) : 0;
    const int q = (p < 32 ? (byte & 15) : (byte >> 4)) + high;
    ASSERT_EQ(y[e], static_cast<float>(scale[sub] * q) - 0.5f * min[sub]) << "element " << e;
  }
}

TEST(DequantTest, Q4_KAppliesSixBitScalesAndMinsPerSubBlock) {
  const BlockQ4_K b = ScaleMinTestBlock<BlockQ4_K>();
  float y[256];
  DequantizeQ4_KRef(&b, y, 256);
  // Element e: group g = e / 64 reads qs[32g .. 32g + 31]; e % 64 < 32 takes low nibbles with
  // sub-block 2g, else high nibbles with sub-block 2g + 1. x = d * scale * q - dmin * min.
  EXPECT_EQ(y[0], 1 * 1 * 0 - 0.5f * 0);        // sub 0, qs[0] low = 0
  EXPECT_EQ(y[5], 1 * 1 * 5 - 0.5f * 0);        // sub 0, qs[5] low = 5
  EXPECT_EQ(y[33], 1 * 2 * 14 - 0.5f * 5);      // sub 1, qs[1] high = 14
  EXPECT_EQ(y[64 + 20], 1 * 3 * 4 - 0.5f * 7);  // sub 2, qs[52] low = 4
  EXPECT_EQ(y[130], 1 * 33 * 2 - 0.5f * 40);    // sub 4, qs[66] low = 2
  EXPECT_EQ(y[170], 1 * 10 * 5 - 0.5f * 2);     // sub 5, qs[74] high = 15 - 10 = 5
  EXPECT_EQ(y[200], 1 * 63 * 8 - 0.5f * 63);    // sub 6, qs[104] low = 8
  EXPECT_EQ(y[255], 1 * 16 * 0 - 0.5f * 17);    // sub 7, qs[127] high = 0
  ExpectScaleMinElements(y, b.qs, nullptr);
}

TEST(DequantTest, Q6_KCombinesLowNibblesAndHighBitPairs) {
  BlockQ6_K b = {};
  b.d = 0x3c00;  // 1
  for (int8_t& s : b.scales) s = 1;
  b.ql[0] = 0x21;        // element 0: low 1; element 64: low 2
  b.qh[0] = 0b11100100;  // bit pairs: element 0 -> 0, 32 -> 1, 64 -> 2, 96 -> 3
  float y[256];
  DequantizeQ6_KRef(&b, y, 256);
  EXPECT_EQ(y[0], (1 | 0 << 4) - 32.0f);
  EXPECT_EQ(y[32], (0 | 1 << 4) - 32.0f);
  EXPECT_EQ(y[64], (2 | 2 << 4) - 32.0f);
  EXPECT_EQ(y[96], (0 | 3 << 4) - 32.0f);
  EXPECT_EQ(y[1], -32.0f);
  EXPECT_EQ(y[128], -32.0f);
}

TEST(DequantTest, Q6_KUsesOneSignedScalePerSixteenElements) {
  BlockQ6_K b = {};
  b.d = 0x3400;  // 0.25
  for (int s = 0; s < 16; s++) b.scales[s] = static_cast<int8_t>(s % 2 ? -(s + 1) : s + 1);
  std::vector<int> q(256);
  for (int e = 0; e < 256; e++) q[e] = (e * 7) % 64;
  // Pack per the layout: half h, l < 32 -> elements 128h + l + {0, 32, 64, 96}.
  for (int h = 0; h < 2; h++) {
    for (int l = 0; l < 32; l++) {
      const int* e = &q[128 * h + l];
      b.ql[64 * h + l] = static_cast<uint8_t>((e[0] & 15) | (e[64] & 15) << 4);
      b.ql[64 * h + l + 32] = static_cast<uint8_t>((e[32] & 15) | (e[96] & 15) << 4);
      b.qh[32 * h + l] = static_cast<uint8_t>(e[0] >> 4 | (e[32] >> 4) << 2 | (e[64] >> 4) << 4 |
                                              (e[96] >> 4) << 6);
    }
  }
  float y[256];
  DequantizeQ6_KRef(&b, y, 256);
  EXPECT_EQ(y[0], 0.25f * 1 * (0 - 32));
  EXPECT_EQ(y[100], 0.25f * 7 * (60 - 32));    // scale 6 = 7, q = 700 % 64 = 60
  EXPECT_EQ(y[255], 0.25f * -16 * (57 - 32));  // scale 15 = -16, q = 1785 % 64 = 57
  for (int e = 0; e < 256; e++) {
    ASSERT_EQ(y[e], 0.25f * b.scales[e / 16] * (q[e] - 32)) << "element " << e;
  }
}

TEST(DequantTest, DispatchCoversEveryType) {
  const float f32[2] = {1.5f, -2.0f};
  float y[32] = {};
  ASSERT_TRUE(DequantizeRef(DType::kF32, f32, y, 2));
  EXPECT_EQ(y[1], -2.0f);
  BlockQ8_0 q8 = {};
  q8.d = 0x3c00;
  q8.qs[3] = -7;
  ASSERT_TRUE(DequantizeRef(DType::kQ8_0, &q8, y, 32));
  EXPECT_EQ(y[3], -7.0f);
  EXPECT_FALSE(DequantizeRef(static_cast<DType>(16), &q8, y, 32));  // IQ2_XXS: no routine
}

TEST(QuantizeTest, Q8_0MatchesGgmlRounding) {
  float x[32];
  for (int j = 0; j < 32; j++) x[j] = static_cast<float>(j - 16);
  BlockQ8_0 b;
  QuantizeQ8_0Ref(x, &b, 32);
  EXPECT_EQ(b.d, Fp32ToFp16(16.0f / 127.0f));  // d = amax / 127
  EXPECT_EQ(b.qs[0], -127);
  EXPECT_EQ(b.qs[8], -64);  // -8 * 127 / 16 = -63.5 rounds away from zero
  EXPECT_EQ(b.qs[16], 0);
  EXPECT_EQ(b.qs[24], 64);
  EXPECT_EQ(b.qs[31], 119);  // 15 * 127 / 16 = 119.06
}

TEST(QuantizeTest, Q4_0MatchesGgmlRounding) {
  float x[32];
  for (int j = 0; j < 32; j++) x[j] = static_cast<float>(j - 16);
  BlockQ4_0 b;
  QuantizeQ4_0Ref(x, &b, 32);
  // max = -16 (largest magnitude), d = max / -8 = 2, q = min(15, trunc(x / 2 + 8.5)).
  EXPECT_EQ(b.d, 0x4000);
  EXPECT_EQ(b.qs[0] & 15, 0);    // x = -16: 0.5 -> 0
  EXPECT_EQ(b.qs[1] & 15, 1);    // x = -15: 1.0 -> 1
  EXPECT_EQ(b.qs[2] & 15, 1);    // x = -14: 1.5 -> 1
  EXPECT_EQ(b.qs[0] >> 4, 8);    // x = 0: 8.5 -> 8
  EXPECT_EQ(b.qs[15] >> 4, 15);  // x = 15: 16 -> clamped to 15
}

TEST(QuantizeTest, AllZeroBlocksDequantizeToZero) {
  const float x[32] = {};
  BlockQ8_0 q8;
  BlockQ4_0 q4;
  QuantizeQ8_0Ref(x, &q8, 32);
  QuantizeQ4_0Ref(x, &q4, 32);
  float y[32];
  DequantizeQ8_0Ref(&q8, y, 32);
  for (float v : y) EXPECT_EQ(v, 0.0f);
  DequantizeQ4_0Ref(&q4, y, 32);
  for (float v : y) EXPECT_EQ(v, 0.0f);
}

// Error bound per element, with d the block's step and d16 its fp16 rounding:
//   Q8_0: |x - q * d16| <= d / 2 + 127 * |d - d16|   (d = amax / 127)
//   Q4_0: |x - (q - 8) * d16| <= d + 8 * |d - d16|   (d = amax / 8; a full step at the clamped end)
TEST(QuantizeTest, RoundTripErrorStaysWithinTheStepBound) {
  constexpr int kBlocks = 512;
  std::mt19937 rng(1234);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(kBlocks * 32);
  for (int b = 0; b < kBlocks; b++) {
    const float scale = std::exp2(static_cast<float>(b % 16) - 8.0f);  // 2^-8 .. 2^7
    for (int j = 0; j < 32; j++) x[b * 32 + j] = normal(rng) * scale;
  }
  std::vector<BlockQ8_0> q8(kBlocks);
  std::vector<BlockQ4_0> q4(kBlocks);
  QuantizeQ8_0Ref(x.data(), q8.data(), static_cast<int64_t>(x.size()));
  QuantizeQ4_0Ref(x.data(), q4.data(), static_cast<int64_t>(x.size()));
  std::vector<float> y8(x.size()), y4(x.size());
  DequantizeQ8_0Ref(q8.data(), y8.data(), static_cast<int64_t>(x.size()));
  DequantizeQ4_0Ref(q4.data(), y4.data(), static_cast<int64_t>(x.size()));
  double sum_sq_err8 = 0.0, sum_sq_err4 = 0.0, sum_sq = 0.0;
  for (int b = 0; b < kBlocks; b++) {
    float amax = 0.0f;
    for (int j = 0; j < 32; j++) amax = std::max(amax, std::fabs(x[b * 32 + j]));
    const float d8 = amax / 127.0f, d4 = amax / 8.0f;
    const float bound8 = d8 / 2 + 127 * std::fabs(d8 - Fp16ToFp32(q8[b].d)) + 1e-6f * amax;
    const float bound4 = d4 + 8 * std::fabs(d4 - std::fabs(Fp16ToFp32(q4[b].d))) + 1e-6f * amax;
    for (int j = 0; j < 32; j++) {
      const int i = b * 32 + j;
      ASSERT_LE(std::fabs(x[i] - y8[i]), bound8) << "Q8_0 block " << b << " element " << j;
      ASSERT_LE(std::fabs(x[i] - y4[i]), bound4) << "Q4_0 block " << b << " element " << j;
      sum_sq_err8 += (x[i] - y8[i]) * (x[i] - y8[i]);
      sum_sq_err4 += (x[i] - y4[i]) * (x[i] - y4[i]);
      sum_sq += x[i] * x[i];
    }
  }
  // Relative RMS error: Q8_0 about 0.5%, Q4_0 about 10% on Gaussian blocks of 32.
  EXPECT_LT(std::sqrt(sum_sq_err8 / sum_sq), 0.01);
  EXPECT_LT(std::sqrt(sum_sq_err4 / sum_sq), 0.15);
}

// Q5_K: Q4_K's scales, mins and nibbles, and the fifth bit of element l of sub-block s in bit s
// of qh[l % 32].
TEST(DequantTest, Q5_KAddsTheHighBitOfEachSubBlockFromQh) {
  BlockQ5_K b = ScaleMinTestBlock<BlockQ5_K>();
  for (int l = 0; l < 32; l++) b.qh[l] = static_cast<uint8_t>(l * 37 + 11);
  float y[256];
  DequantizeQ5_KRef(&b, y, 256);
  EXPECT_EQ(y[0], 1 * 1 * (0 + 16 * (11 & 1)) - 0.5f * 0);  // sub 0, qh[0] = 11: bit 0 set
  EXPECT_EQ(y[255], 1 * 16 * (0 + 16 * (((31 * 37 + 11) >> 7) & 1)) - 0.5f * 17);  // sub 7
  ExpectScaleMinElements(y, b.qs, b.qh);
}

// IQ4_XS: sub-block s scaled by d * (ls_s - 32), ls_s from a nibble of scales_l and two bits of
// scales_h; its 16 bytes hold elements 0..15 (low nibbles) and 16..31 (high) as level indices.
TEST(DequantTest, IQ4_XSLooksUpTheNonLinearLevelsWithSixBitSignedScales) {
  BlockIQ4_XS b = {};
  b.d = 0x3800;                                      // 0.5
  const int ls[8] = {0, 1, 31, 32, 33, 47, 62, 63};  // scales -32, -31, -1, 0, 1, 15, 30, 31
  for (int s = 0; s < 8; s++) {
    b.scales_l[s / 2] |= static_cast<uint8_t>((ls[s] & 15) << (4 * (s % 2)));
    b.scales_h |= static_cast<uint16_t>((ls[s] >> 4) << (2 * s));
  }
  for (int i = 0; i < 128; i++) b.qs[i] = static_cast<uint8_t>((i % 16) | ((15 - i % 16) << 4));
  float y[256];
  DequantizeIQ4_XSRef(&b, y, 256);
  EXPECT_EQ(y[0], 0.5f * -32 * -127);      // sub 0, qs[0] low = 0
  EXPECT_EQ(y[16], 0.5f * -32 * 113);      // sub 0, qs[0] high = 15
  EXPECT_EQ(y[32 + 3], 0.5f * -31 * -65);  // sub 1, qs[19] low = 3
  EXPECT_EQ(y[96 + 5], 0.0f);              // sub 3: scale 0
  EXPECT_EQ(y[255], 0.5f * 31 * -127);     // sub 7, qs[127] high = 15 - 15 = 0
  for (int e = 0; e < 256; e++) {
    const int s = e / 32, j = e % 32;
    const uint8_t byte = b.qs[16 * s + j % 16];
    const int q = j < 16 ? (byte & 15) : (byte >> 4);
    ASSERT_EQ(y[e], 0.5f * static_cast<float>((ls[s] - 32) * kIq4NlValues[q])) << "element " << e;
  }
}

// Relative RMS error sqrt(sum (x - y)^2 / sum x^2) of every type's round trip of x: [n].
struct RoundTripErrors {
  double q8_0, q4_0, q4_k, q5_k, q6_k, iq4_xs;
};

double RelativeRms(const std::vector<float>& x, const std::vector<float>& y) {
  double err = 0.0, sum = 0.0;
  for (size_t i = 0; i < x.size(); i++) {
    err += (double{x[i]} - y[i]) * (double{x[i]} - y[i]);
    sum += double{x[i]} * x[i];
  }
  return std::sqrt(err / sum);
}

RoundTripErrors RoundTrip(const std::vector<float>& x) {
  const auto n = static_cast<int64_t>(x.size());
  std::vector<float> y(x.size());
  RoundTripErrors e{};
  std::vector<BlockQ8_0> q8(n / 32);
  QuantizeQ8_0Ref(x.data(), q8.data(), n);
  DequantizeQ8_0Ref(q8.data(), y.data(), n);
  e.q8_0 = RelativeRms(x, y);
  std::vector<BlockQ4_0> q4(n / 32);
  QuantizeQ4_0Ref(x.data(), q4.data(), n);
  DequantizeQ4_0Ref(q4.data(), y.data(), n);
  e.q4_0 = RelativeRms(x, y);
  std::vector<BlockQ4_K> k4(n / 256);
  QuantizeQ4_KRef(x.data(), k4.data(), n);
  DequantizeQ4_KRef(k4.data(), y.data(), n);
  e.q4_k = RelativeRms(x, y);
  std::vector<BlockQ5_K> k5(n / 256);
  QuantizeQ5_KRef(x.data(), k5.data(), n);
  DequantizeQ5_KRef(k5.data(), y.data(), n);
  e.q5_k = RelativeRms(x, y);
  std::vector<BlockQ6_K> k6(n / 256);
  QuantizeQ6_KRef(x.data(), k6.data(), n);
  DequantizeQ6_KRef(k6.data(), y.data(), n);
  e.q6_k = RelativeRms(x, y);
  std::vector<BlockIQ4_XS> i4(n / 256);
  QuantizeIQ4_XSRef(x.data(), i4.data(), n);
  DequantizeIQ4_XSRef(i4.data(), y.data(), n);
  e.iq4_xs = RelativeRms(x, y);
  return e;
}

// 256 super-blocks, block b scaled by 2^(b % 16 - 8), of N(0, 1) or (one-sided) U(0, 1) values.
std::vector<float> ScaledBlocks(bool one_sided) {
  std::mt19937 rng(1234);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::vector<float> x(256 * 256);
  for (size_t i = 0; i < x.size(); i++) {
    const float scale = std::exp2(static_cast<float>((i / 256) % 16) - 8.0f);
    x[i] = (one_sided ? uniform(rng) : normal(rng)) * scale;
  }
  return x;
}

// Measured (seed 1234): Q8_0 0.0055, Q6_K 0.0174, Q5_K 0.0359, Q4_K 0.0716, Q4_0 0.0872. On
// Gaussian data the 4-bit step is set by the range either way; Q4_K's gain is its least-squares fit
// and the 16th level Q4_0 leaves unused. Bounds leave ~5% margin.
TEST(QuantizeKTest, GaussianRoundTripErrorRanksQ8_0Q6_KQ5_KQ4_KQ4_0) {
  const RoundTripErrors e = RoundTrip(ScaledBlocks(false));
  EXPECT_LT(e.iq4_xs, 0.079);  // measured 0.0751: Q4_K's error with a fixed grid and no min
  EXPECT_LT(e.q5_k, 0.0375);
  EXPECT_LT(e.q6_k, e.q5_k);
  EXPECT_LT(e.q5_k, e.q4_k / 1.8);
  EXPECT_LT(e.q6_k, 0.0185);
  EXPECT_LT(e.q4_k, 0.075);
  EXPECT_LT(e.q8_0, e.q6_k);
  EXPECT_LT(e.q6_k, e.q4_k / 3);
  EXPECT_LT(e.q4_k, 0.87 * e.q4_0);
}

// Measured: Q4_0 0.0596, Q4_K 0.0291 (its min shifts the 16 levels onto [0, max]), Q5_K 0.0142,
// Q6_K 0.0127.
TEST(QuantizeKTest, OneSidedDataUsesTheQ4_KMinForHalfTheQ4_0Error) {
  const RoundTripErrors e = RoundTrip(ScaledBlocks(true));
  EXPECT_LT(e.q4_k, 0.031);
  EXPECT_LT(e.iq4_xs, 0.063);  // measured 0.0598: no min, so Q4_0's error here
  EXPECT_LT(e.q5_k, 0.015);
  EXPECT_LT(e.q4_k, 0.55 * e.q4_0);
  EXPECT_LT(e.q6_k, 0.0135);
}

// A block the format can hold exactly (every sub-block uses its lowest and highest quant, so the
// range fit finds its step) comes back bit for bit, and so do its bytes.
// A Q4_K or Q5_K block the format can hold exactly: d = 1, dmin = 0.5, kQ4KScales, varied
// nibbles (and high bits), and in every sub-block its lowest and highest quant (so the range fit
// finds its step).
template <typename Block>
Block RepresentableScaleMinBlock() {
  Block want = {};
  want.d = 0x3c00;     // 1
  want.dmin = 0x3800;  // 0.5
  // Scales up to 63 and mins up to 63, so the fit's d = 63 / 63 and dmin = 0.5 * 63 / 63 exactly.
  std::memcpy(want.scales, kQ4KScales, sizeof(kQ4KScales));
  for (int l = 0; l < 128; l++) {
    want.qs[l] = static_cast<uint8_t>(((l * 5) % 16) | (((l * 7 + 3) % 16) << 4));
  }
  for (int g = 0; g < 4; g++) {  // quants 0 and 15 (Q5_K: 0 and 31) in both nibbles of a group
    want.qs[32 * g] = 0xf0;
    want.qs[32 * g + 1] = 0x0f;
  }
  if constexpr (std::is_same_v<Block, BlockQ5_K>) {
    for (int l = 2; l < 32; l++) want.qh[l] = static_cast<uint8_t>(l * 73 + 5);
    want.qh[0] = 0xaa;  // element 0: even sub-blocks 0, odd ones 15 + 16
    want.qh[1] = 0x55;  // element 1: even sub-blocks 15 + 16, odd ones 0
  }
  return want;
}

// The block comes back bit for bit, and so do its bytes.
template <typename Block, void (*Quantize)(const float*, Block*, int64_t),
          void (*Dequantize)(const Block*, float*, int64_t)>
void ExpectRepresentableBlockSurvives() {
  const Block want = RepresentableScaleMinBlock<Block>();
  float x[256];
  Dequantize(&want, x, 256);
  Block got;
  Quantize(x, &got, 256);
  float y[256];
  Dequantize(&got, y, 256);
  for (int e = 0; e < 256; e++) ASSERT_EQ(y[e], x[e]) << "element " << e;
  EXPECT_EQ(std::memcmp(&got, &want, sizeof(got)), 0);
}

TEST(QuantizeKTest, RepresentableQ4_KBlockSurvivesExactly) {
  ExpectRepresentableBlockSurvives<BlockQ4_K, QuantizeQ4_KRef, DequantizeQ4_KRef>();
}

TEST(QuantizeKTest, RepresentableQ5_KBlockSurvivesExactly) {
  ExpectRepresentableBlockSurvives<BlockQ5_K, QuantizeQ5_KRef, DequantizeQ5_KRef>();
}

TEST(QuantizeKTest, RepresentableQ6_KBlockSurvivesExactly) {
  float x[256];
  const int scale[16] = {127, -3, 5, 64, -127, 1, 90, -45, 12, 33, -100, 7, 2, -2, 126, 50};
  for (int e = 0; e < 256; e++) {
    const int q = e % 16 == 0 ? -32 : e % 16 == 1 ? 31 : (e * 11) % 64 - 32;  // both ends
    x[e] = 0.25f * static_cast<float>(scale[e / 16] * q);  // d = 0.25, exact in fp16
  }
  BlockQ6_K b;
  QuantizeQ6_KRef(x, &b, 256);
  EXPECT_EQ(b.d, 0x3400);  // 0.25
  float y[256];
  DequantizeQ6_KRef(&b, y, 256);
  for (int e = 0; e < 256; e++) ASSERT_EQ(y[e], x[e]) << "element " << e;
}

TEST(QuantizeKTest, ZerosGiveZerosAndConstantsComeBackClose) {
  std::vector<float> x(3 * 256, 0.0f);
  std::fill(x.begin() + 256, x.begin() + 512, 0.3f);
  std::fill(x.begin() + 512, x.end(), -7.5f);
  BlockQ4_K k4[3];
  BlockQ6_K k6[3];
  QuantizeQ4_KRef(x.data(), k4, 768);
  QuantizeQ6_KRef(x.data(), k6, 768);
  EXPECT_EQ(k4[0].d | k4[0].dmin, 0);
  EXPECT_EQ(k6[0].d, 0);
  std::vector<float> y4(768), y6(768);
  DequantizeQ4_KRef(k4, y4.data(), 768);
  DequantizeQ6_KRef(k6, y6.data(), 768);
  for (int i = 0; i < 256; i++) {
    ASSERT_EQ(y4[i], 0.0f) << "element " << i;
    ASSERT_EQ(y6[i], 0.0f) << "element " << i;
  }
  for (int i = 256; i < 768; i++) {  // fp16 super-block scales: 2^-11 relative, and margin
    ASSERT_NEAR(y4[i], x[i], 1e-3f * std::fabs(x[i])) << "Q4_K element " << i;
    ASSERT_NEAR(y6[i], x[i], 1e-3f * std::fabs(x[i])) << "Q6_K element " << i;
  }
}

TEST(QuantizeKTest, ExtremeInputsGiveFiniteValuesAndLeaveOtherBlocksAlone) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::vector<float> x(4 * 256);
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& v : x) v = normal(rng);
  x[3] = 3e38f;  // block 0: beyond any fp16 super-block scale, with inf and tiny values
  x[100] = -kInf;
  x[200] = 1e-30f;
  for (int i = 256; i < 512; i++) x[i] = (i % 2 ? 1e30f : -1e30f);  // block 1: huge both ways
  for (int i = 512; i < 768; i++) x[i] = 1e-20f * normal(rng);      // block 2: below fp16
  std::vector<BlockQ4_K> k4(4);
  std::vector<BlockQ5_K> k5(4);
  std::vector<BlockQ6_K> k6(4);
  QuantizeQ4_KRef(x.data(), k4.data(), 1024);
  QuantizeQ5_KRef(x.data(), k5.data(), 1024);
  QuantizeQ6_KRef(x.data(), k6.data(), 1024);
  std::vector<float> y4(1024), y5(1024), y6(1024);
  DequantizeQ4_KRef(k4.data(), y4.data(), 1024);
  DequantizeQ5_KRef(k5.data(), y5.data(), 1024);
  DequantizeQ6_KRef(k6.data(), y6.data(), 1024);
  for (int i = 0; i < 1024; i++) {
    ASSERT_TRUE(std::isfinite(y4[i]) && std::isfinite(y5[i]) && std::isfinite(y6[i]))
        << "element " << i;
  }
  EXPECT_GT(y5[3], 1e7f);
  EXPECT_GT(y4[3], 1e7f);  // saturated, with the sign kept
  EXPECT_LT(y6[100], -1e7f);
  const std::vector<float> x3(x.begin() + 768, x.end());
  EXPECT_LT(RelativeRms(x3, std::vector<float>(y4.begin() + 768, y4.end())), 0.08);
  EXPECT_LT(RelativeRms(x3, std::vector<float>(y5.begin() + 768, y5.end())), 0.04);
  EXPECT_LT(RelativeRms(x3, std::vector<float>(y6.begin() + 768, y6.end())), 0.02);
}

}  // namespace
}  // namespace smallmind::kernels
