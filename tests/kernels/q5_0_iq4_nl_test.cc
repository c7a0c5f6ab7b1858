// Q5_0 and IQ4_NL, the blocks of 32 llama.cpp falls back to when a row is not a multiple of 256:
// their dequantizers against hand-built blocks (the layouts of ggml's block_q5_0 / block_iq4_nl),
// ggml's Q5_0 rounding, smallmind's IQ4_NL quantizer, and the reference matmul over Q8
// activations against the float reference on the dequantized weights.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/q8_act.h"
#include "kernels/quant_blocks.h"
#include "kernels/ref/dequant_ref.h"
#include "kernels/ref/matmul_ref.h"
#include "kernels/ref/quantize_ref.h"
#include "tests/kernels/random_weights.h"

namespace smallmind::kernels {
namespace {

TEST(Q5_0Test, FifthBitsComeFromTheLittleEndianQh) {
  BlockQ5_0 b = {};
  b.d = 0x4000;  // 2
  b.qs[0] = 0xf0;
  b.qs[3] = 0x5a;
  const uint32_t qh = (1u << 0) | (1u << 3) | (1u << 19) | (1u << 31);
  std::memcpy(b.qh, &qh, 4);
  float y[32];
  DequantizeQ5_0Ref(&b, y, 32);
  EXPECT_EQ(y[0], ((0x0 | 16) - 16) * 2.0f);   // nibble 0, fifth bit 0 set
  EXPECT_EQ(y[16], (0xf - 16) * 2.0f);         // nibble 15, bit 16 clear
  EXPECT_EQ(y[3], ((0xa | 16) - 16) * 2.0f);   // bit 3
  EXPECT_EQ(y[19], ((0x5 | 16) - 16) * 2.0f);  // bit 19
  EXPECT_EQ(y[31], ((0x0 | 16) - 16) * 2.0f);  // bit 31
  EXPECT_EQ(y[1], -32.0f);                     // all zero: -16 * d
  for (int j = 0; j < 32; j++) EXPECT_EQ(y[j], Q5_0Quant(b, j) * 2.0f) << j;
}

TEST(Q5_0Test, QuantizeMatchesGgmlRounding) {
  float x[32];
  for (int j = 0; j < 32; j++) x[j] = static_cast<float>(j - 16);
  BlockQ5_0 b;
  QuantizeQ5_0Ref(x, &b, 32);
  // max = -16, d = max / -16 = 1, q = min(31, trunc(x + 16.5)): x + 16 for every element.
  EXPECT_EQ(b.d, 0x3c00);
  float y[32];
  DequantizeQ5_0Ref(&b, y, 32);
  for (int j = 0; j < 32; j++) EXPECT_EQ(y[j], x[j]) << j;
  // The positive end: max = 31 gives d = -31/16 and q = 0 for x = 31.
  for (int j = 0; j < 32; j++) x[j] = static_cast<float>(j);
  QuantizeQ5_0Ref(x, &b, 32);
  EXPECT_EQ(b.d, Fp32ToFp16(31.0f / -16.0f));
  EXPECT_EQ(Q5_0Quant(b, 31), -16);
  EXPECT_EQ(Q5_0Quant(b, 0), 0);  // x = 0: trunc(16.5) = 16
}

TEST(IQ4_NLTest, IndicesPickTheNonLinearLevels) {
  BlockIQ4_NL b = {};
  b.d = 0x3800;  // 0.5
  for (int j = 0; j < 16; j++) b.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  float y[32];
  DequantizeIQ4_NLRef(&b, y, 32);
  for (int j = 0; j < 16; j++) {
    EXPECT_EQ(y[j], 0.5f * kIq4NlValues[j]) << j;
    EXPECT_EQ(y[j + 16], 0.5f * kIq4NlValues[15 - j]) << j;
  }
}

// Relative RMS error of the round trip on Gaussian data (seed 7), against Q4_0's: the quantizer
// fits its scale by least squares over the non-linear levels. Measured: Q5_0 0.0437, IQ4_NL 0.0716,
// Q4_0 0.0872.
TEST(IQ4_NLTest, RoundTripErrorRanksQ5_0IQ4_NLQ4_0) {
  const int n = 32 * 512;
  std::mt19937 rng(7);
  std::normal_distribution<float> dist;
  std::vector<float> x(n), y(n);
  for (float& v : x) v = dist(rng);
  const auto rms = [&] {
    double e = 0, s = 0;
    for (int i = 0; i < n; i++) {
      e += (x[i] - y[i]) * double(x[i] - y[i]);
      s += x[i] * double(x[i]);
    }
    return std::sqrt(e / s);
  };
  std::vector<BlockQ4_0> q4(n / 32);
  QuantizeQ4_0Ref(x.data(), q4.data(), n);
  DequantizeQ4_0Ref(q4.data(), y.data(), n);
  const double e4 = rms();
  std::vector<BlockQ5_0> q5(n / 32);
  QuantizeQ5_0Ref(x.data(), q5.data(), n);
  DequantizeQ5_0Ref(q5.data(), y.data(), n);
  const double e5 = rms();
  std::vector<BlockIQ4_NL> nl(n / 32);
  QuantizeIQ4_NLRef(x.data(), nl.data(), n);
  DequantizeIQ4_NLRef(nl.data(), y.data(), n);
  const double enl = rms();
  EXPECT_LT(e5, 0.6 * e4) << e5 << " " << e4;
  EXPECT_LT(enl, 0.9 * e4) << enl << " " << e4;
  EXPECT_LT(e5, enl);
}

TEST(IQ4_NLTest, ZeroNanAndHugeInputsGiveFiniteBlocks) {
  float x[64] = {};
  x[33] = std::nanf("");
  x[40] = 1e30f;
  x[41] = -std::numeric_limits<float>::infinity();
  std::vector<BlockIQ4_NL> b(2);
  QuantizeIQ4_NLRef(x, b.data(), 64);
  float y[64];
  DequantizeIQ4_NLRef(b.data(), y, 64);
  for (int j = 0; j < 32; j++) EXPECT_EQ(y[j], 0.0f) << j;  // level 1 times d = 0
  for (int j = 32; j < 64; j++) EXPECT_TRUE(std::isfinite(y[j])) << j;
  EXPECT_GT(y[40], 6e6f);  // 65504 * 113
  EXPECT_LT(y[41], -6e6f);
}

// MatmulQ5_0Q8ActRef / MatmulIQ4_NLQ8ActRef: blocks of (dw * dx) * isum, so within the activation
// quantization's bound of the float matmul on the dequantized weights.
TEST(Q5_0Test, Q8ActReferenceMatmulsTrackTheFloatReference) {
  for (DType type : {DType::kQ5_0, DType::kIQ4_NL}) {
    const int in_dim = 32 * 37, out_dim = 11, n_tokens = 3;
    const std::vector<uint8_t> w = testing::RandomWeights(type, out_dim, in_dim, 5);
    const std::vector<float> wf = testing::DequantizeAll(type, w, out_dim, in_dim);
    const std::vector<float> x = testing::RandomFloats(size_t(n_tokens) * in_dim, 6);
    std::vector<uint8_t> xq(n_tokens * Q8ActRowBytes(in_dim));
    QuantizeQ8ActRef(x.data(), xq.data(), in_dim, AllRows(n_tokens));
    std::vector<float> got(size_t(n_tokens) * out_dim), want(got.size());
    (type == DType::kQ5_0 ? MatmulQ5_0Q8ActRef : MatmulIQ4_NLQ8ActRef)(
        w.data(), xq.data(), got.data(), n_tokens, in_dim, out_dim, AllRows(out_dim));
    MatmulF32Ref(wf.data(), x.data(), want.data(), n_tokens, in_dim, out_dim, AllRows(out_dim));
    for (size_t i = 0; i < got.size(); i++) {
      double bound = 1e-4;
      for (int k = 0; k < in_dim; k++) bound += std::fabs(wf[(i % out_dim) * in_dim + k]) / 254;
      EXPECT_NEAR(got[i], want[i], bound) << i;
    }
  }
}

}  // namespace
}  // namespace smallmind::kernels
