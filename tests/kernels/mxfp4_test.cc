// MXFP4 (GGUF type 39): the dequantizer against hand-built blocks (ggml's block_mxfp4: low
// nibbles are elements 0..15, the E8M0 byte 2^(e - 127) times the E2M1 value), ggml's reference
// quantizer's exponent and nearest-code choice, the reference matmul over Q8 activations against
// the float reference on the dequantized weights, and the fast paths' widening to Q8_0 over the
// exponents it reaches exactly and the two ends it clamps; the AVX2 table's own MXFP4 kernel over
// every exponent.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/dispatch.h"
#include "kernels/kernels.h"
#include "kernels/q8_act.h"
#include "kernels/quant_blocks.h"
#include "kernels/ref/dequant_ref.h"
#include "kernels/ref/matmul_ref.h"
#include "kernels/ref/quantize_ref.h"
#include "tests/kernels/random_weights.h"

namespace smallmind::kernels {
namespace {

// The 16 E2M1 values as the OCP MX spec lists them (sign bit 3, exponent bits 2..1, mantissa
// bit 0): the doubled table halved.
constexpr float kE2M1[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                             -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

TEST(MXFP4Test, ExponentOf127IsScaleOneOverTheE2M1Values) {
  BlockMXFP4 b = {};
  b.e = 127;  // E8M0 2^0
  for (int j = 0; j < 16; j++) b.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  float y[32];
  DequantizeMXFP4Ref(&b, y, 32);
  for (int j = 0; j < 16; j++) {
    EXPECT_EQ(y[j], kE2M1[j]) << j;            // low nibble: element j
    EXPECT_EQ(y[j + 16], kE2M1[15 - j]) << j;  // high nibble: element j + 16
  }
  b.e = 130;  // 2^3
  DequantizeMXFP4Ref(&b, y, 32);
  EXPECT_EQ(y[7], 48.0f);
  EXPECT_EQ(y[16], -48.0f);
}

TEST(MXFP4Test, E8M0HalfCoversEveryExponentExactly) {
  EXPECT_EQ(E8M0HalfToFp32(0), std::ldexp(1.0f, -128));  // float subnormals
  EXPECT_EQ(E8M0HalfToFp32(1), std::ldexp(1.0f, -127));
  EXPECT_EQ(E8M0HalfToFp32(2), std::ldexp(1.0f, -126));
  EXPECT_EQ(E8M0HalfToFp32(128), 1.0f);
  EXPECT_EQ(E8M0HalfToFp32(255), std::ldexp(1.0f, 127));  // ggml reads 0xff as a number too
  for (int e = 0; e < 256; e++) {
    EXPECT_EQ(E8M0HalfToFp32(static_cast<uint8_t>(e)), std::ldexp(1.0f, e - 128)) << e;
  }
}

TEST(MXFP4Test, QuantizerPutsTheBlockMaximumInTheTopBinadeAndPicksNearestCodes) {
  float x[32] = {};
  x[0] = 6.0f;    // amax: floor(log2 6) = 2, e = 127, d = 0.5
  x[1] = -3.0f;   // exact: code 13
  x[2] = 0.25f;   // halfway between 0 and 0.5: the first, code 0
  x[3] = -0.25f;  // between 0, -0 and -0.5: code 0 again
  x[4] = 2.4f;    // nearest 2: code 4
  x[17] = 5.1f;   // nearest 6: code 7 (high nibble of byte 1)
  x[18] = -1.2f;  // nearest -1: code 10
  BlockMXFP4 b;
  QuantizeMXFP4Ref(x, &b, 32);
  EXPECT_EQ(b.e, 127);
  EXPECT_EQ(b.qs[0] & 0x0f, 7);
  EXPECT_EQ(b.qs[1] & 0x0f, 13);
  EXPECT_EQ(b.qs[2] & 0x0f, 0);
  EXPECT_EQ(b.qs[3] & 0x0f, 0);
  EXPECT_EQ(b.qs[4] & 0x0f, 4);
  EXPECT_EQ(b.qs[1] >> 4, 7);
  EXPECT_EQ(b.qs[2] >> 4, 10);
  // amax 7.9 is still binade 2; 8 moves to e = 128 (d = 1, levels up to 12).
  x[0] = 7.9f;
  QuantizeMXFP4Ref(x, &b, 32);
  EXPECT_EQ(b.e, 127);
  EXPECT_EQ(b.qs[0] & 0x0f, 7);  // clipped to 6
  x[0] = 8.0f;
  QuantizeMXFP4Ref(x, &b, 32);
  EXPECT_EQ(b.e, 128);
  EXPECT_EQ(b.qs[0] & 0x0f, 6);  // 8 exactly
  // An all-zero block: e = 0 and every code 0.
  std::memset(x, 0, sizeof(x));
  QuantizeMXFP4Ref(x, &b, 32);
  EXPECT_EQ(b.e, 0);
  for (uint8_t q : b.qs) EXPECT_EQ(q, 0);
}

TEST(MXFP4Test, RoundTripStaysWithinHalfTheCoarsestStep) {
  const std::vector<float> x = testing::RandomFloats(32 * 64, 9, -3.0f, 3.0f);
  std::vector<BlockMXFP4> b(64);
  QuantizeMXFP4Ref(x.data(), b.data(), 32 * 64);
  std::vector<float> y(x.size());
  DequantizeMXFP4Ref(b.data(), y.data(), 32 * 64);
  for (int blk = 0; blk < 64; blk++) {
    const float d = E8M0HalfToFp32(b[blk].e);  // levels 0,1,2,3,4,6,8,12 times d: steps <= 4d
    for (int j = 0; j < 32; j++) {
      EXPECT_LE(std::fabs(y[blk * 32 + j] - x[blk * 32 + j]), 2.0f * d) << blk << " " << j;
    }
  }
}

// MatmulMXFP4Q8ActRef: blocks of (dw * dx) * isum, so within the activation quantization's bound
// of the float matmul on the dequantized weights.
TEST(MXFP4Test, Q8ActReferenceMatmulTracksTheFloatReference) {
  const int in_dim = 32 * 37, out_dim = 11, n_tokens = 3;
  const std::vector<uint8_t> w = testing::RandomWeights(DType::kMXFP4, out_dim, in_dim, 5);
  const std::vector<float> wf = testing::DequantizeAll(DType::kMXFP4, w, out_dim, in_dim);
  const std::vector<float> x = testing::RandomFloats(size_t(n_tokens) * in_dim, 6);
  std::vector<uint8_t> xq(n_tokens * Q8ActRowBytes(in_dim));
  QuantizeQ8ActRef(x.data(), xq.data(), in_dim, AllRows(n_tokens));
  std::vector<float> got(size_t(n_tokens) * out_dim), want(got.size());
  MatmulMXFP4Q8ActRef(w.data(), xq.data(), got.data(), n_tokens, in_dim, out_dim, AllRows(out_dim));
  MatmulF32Ref(wf.data(), x.data(), want.data(), n_tokens, in_dim, out_dim, AllRows(out_dim));
  for (size_t i = 0; i < got.size(); i++) {
    double bound = 1e-4;
    for (int k = 0; k < in_dim; k++) bound += std::fabs(wf[(i % out_dim) * in_dim + k]) / 254;
    EXPECT_NEAR(got[i], want[i], bound) << i;
  }
}

// One row per exponent in `exps`, the same random codes in every row: [exps.size(), in_dim].
std::vector<uint8_t> RowsOfExponents(const std::vector<int>& exps, int in_dim) {
  std::vector<uint8_t> bytes(exps.size() * (in_dim / 32) * sizeof(BlockMXFP4));
  auto* blocks = reinterpret_cast<BlockMXFP4*>(bytes.data());
  for (size_t r = 0; r < exps.size(); r++) {
    std::mt19937 rng(17);
    for (int b = 0; b < in_dim / 32; b++) {
      BlockMXFP4& blk = blocks[r * (in_dim / 32) + b];
      blk.e = static_cast<uint8_t>(exps[r]);
      for (uint8_t& q : blk.qs) q = static_cast<uint8_t>(rng());
    }
  }
  return bytes;
}

// The AVX-VNNI and AMX tables run MXFP4 as Q8_0 blocks (quants the doubled levels,
// d = 2^(e - 128) in fp16). e 104..143 is fp16's range of powers of two; up to 146 the surplus
// moves into the quants. Those give the reference's dot products (to float reordering); below 104 a
// block reads as zeros (every value under 3.6e-7), above 146 as e = 146. The AVX2 and AVX-512
// tables' kernels read the codes with a float scale per block: every exponent gives the
// reference's dot products. Every table the CPU runs is checked.
TEST(MXFP4Test, FastPathsWidenToQ8_0ExactlyOverTheExponentsWeightsUse) {
  if (!CpuSupports(Isa::kAvx2)) GTEST_SKIP() << "this CPU has no AVX2/FMA/F16C";
  const int in_dim = 32 * 9, n_tokens = 5;
  const std::vector<int> exps = {104, 110, 120, 127, 128, 135, 143,
                                 144, 145, 146, 103, 60,  147, 200};
  const int out_dim = static_cast<int>(exps.size());
  const std::vector<uint8_t> w = RowsOfExponents(exps, in_dim);
  const std::vector<float> x = testing::RandomFloats(size_t(n_tokens) * in_dim, 3);
  std::vector<uint8_t> xq(n_tokens * Q8ActRowBytes(in_dim));
  QuantizeQ8ActRef(x.data(), xq.data(), in_dim, AllRows(n_tokens));
  std::vector<float> want(size_t(n_tokens) * out_dim);
  MatmulMXFP4Q8ActRef(w.data(), xq.data(), want.data(), n_tokens, in_dim, out_dim,
                      AllRows(out_dim));
  std::vector<float> abs_ref(want.size());
  const std::vector<float> wf = testing::DequantizeAll(DType::kMXFP4, w, out_dim, in_dim);
  for (int t = 0; t < n_tokens; t++) {
    for (int r = 0; r < out_dim; r++) {
      double s = 0;
      for (int k = 0; k < in_dim; k++) {
        s += std::fabs(double{wf[size_t(r) * in_dim + k]} * x[size_t(t) * in_dim + k]);
      }
      abs_ref[size_t(t) * out_dim + r] = static_cast<float>(s);
    }
  }
  for (const auto& [isa, mode] : {std::pair{Isa::kAvx2, ExecMode::kDeterministic},
                                  {Isa::kAvx2, ExecMode::kParallel},
                                  {Isa::kAvxVnni, ExecMode::kParallel},
                                  {Isa::kAvx512, ExecMode::kDeterministic},
                                  {Isa::kAvx512, ExecMode::kParallel},
                                  {Isa::kAmx, ExecMode::kParallel}}) {
    if (!CpuSupports(isa)) continue;
    SCOPED_TRACE(IsaName(isa));
    const KernelTable table = SelectKernels(isa, mode);
    const MatmulOp& op = *table.MatmulFor(DType::kMXFP4);
    ASSERT_NE(op.pack, nullptr);
    const std::vector<uint8_t> packed = testing::Pack(op, w, out_dim, in_dim);
    const std::vector<uint8_t> input = testing::Q8InputFor(op, xq.data(), n_tokens, in_dim);
    std::vector<float> got(want.size());
    op.fn(packed.data(), input.data(), got.data(), n_tokens, in_dim, out_dim, AllRows(out_dim));
    const bool native = op.pack == &avx2::PackMXFP4x8 || op.pack == &avx2::PackMXFP4x16;
    for (int t = 0; t < n_tokens; t++) {
      for (int r = 0; r < out_dim; r++) {
        const size_t i = size_t(t) * out_dim + r;
        const int e = exps[r];
        if (native) {
          EXPECT_NEAR(got[i], want[i], 1e-6 * abs_ref[i] * 4) << "e " << e << " t " << t;
          EXPECT_NE(got[i], 0.0f) << "e " << e;
        } else if (e < 104) {
          EXPECT_EQ(got[i], 0.0f) << "e " << e;
        } else if (e > 146) {
          EXPECT_EQ(got[i], got[size_t(t) * out_dim + 9]) << "e " << e;  // row 9 is e = 146
        } else {
          EXPECT_NEAR(got[i], want[i], 1e-6 * abs_ref[i] * 4) << "e " << e << " t " << t;
          EXPECT_NE(got[i], 0.0f) << "e " << e;
        }
      }
    }
  }
}

}  // namespace
}  // namespace smallmind::kernels
