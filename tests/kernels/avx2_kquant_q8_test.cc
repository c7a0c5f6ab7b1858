// The AVX2 Q4_K / Q5_K / Q6_K integer matmuls over Q8 activations: bitwise their scalar
// references (MatmulQ4_KQ8ActRef / MatmulQ5_KQ8ActRef / MatmulQ6_KQ8ActRef) on random shapes, row
// splits and tiles, at the extremes of the int16 partial sums, and within the activation
// quantization error of the float reference (dequantize + MatmulF32Ref).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/dispatch.h"
#include "kernels/q8_act.h"
#include "kernels/ref/matmul_ref.h"
#include "kernels/ref/quantize_ref.h"
#include "tests/kernels/random_weights.h"

namespace smallmind::kernels {
namespace {

constexpr DType kKQuants[] = {DType::kQ4_K, DType::kQ5_K, DType::kQ6_K, DType::kIQ4_XS};

const char* Name(DType t) { return GetDTypeTraits(static_cast<uint32_t>(t))->name; }

MatmulFn Q8Ref(DType t) {
  return t == DType::kQ4_K   ? &MatmulQ4_KQ8ActRef
         : t == DType::kQ5_K ? &MatmulQ5_KQ8ActRef
         : t == DType::kQ6_K ? &MatmulQ6_KQ8ActRef
                             : &MatmulIQ4_XSQ8ActRef;
}
// Q4_K and Q5_K: a d and dmin term per sub-block (the blocks open with fp16 d, dmin).
bool HasMins(DType t) { return t == DType::kQ4_K || t == DType::kQ5_K; }

class Avx2KQuantQ8Test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CpuSupports(Isa::kAvx2)) GTEST_SKIP() << "this CPU has no AVX2/FMA/F16C";
  }
};

std::vector<uint8_t> Quantize(const KernelTable& table, const std::vector<float>& x, int n_tokens,
                              int in_dim) {
  std::vector<uint8_t> xq(n_tokens * Q8ActRowBytes(in_dim));
  table.quantize_q8(x.data(), xq.data(), in_dim, AllRows(n_tokens));
  return xq;
}

// y of the table's op for `type`, its rows computed in the given consecutive ranges.
std::vector<float> RunSplit(const KernelTable& table, DType type, const std::vector<uint8_t>& w,
                            const std::vector<uint8_t>& xq, int n_tokens, int in_dim, int out_dim,
                            const std::vector<int>& cuts) {
  const MatmulOp& op = *table.MatmulFor(type);
  const std::vector<uint8_t> packed = testing::Pack(op, w, out_dim, in_dim);
  std::vector<float> y(size_t(n_tokens) * out_dim, NAN);
  int begin = 0;
  for (int end : cuts) {
    op.fn(packed.data(), xq.data(), y.data(), n_tokens, in_dim, out_dim, RowRange{begin, end});
    begin = end;
  }
  op.fn(packed.data(), xq.data(), y.data(), n_tokens, in_dim, out_dim, RowRange{begin, out_dim});
  return y;
}

TEST_F(Avx2KQuantQ8Test, BothPathsRunThePackedQ8Kernel) {
  const KernelTable par = avx2::Avx2KernelTable(ExecMode::kParallel);
  const KernelTable det = avx2::Avx2KernelTable(ExecMode::kDeterministic);
  for (DType type : kKQuants) {
    EXPECT_EQ(par.MatmulFor(type)->input, MatmulInput::kQ8K) << Name(type);  // llama.cpp's q8_K
    EXPECT_NE(par.MatmulFor(type)->pack, nullptr) << Name(type);
    EXPECT_EQ(det.MatmulFor(type)->fn, par.MatmulFor(type)->fn) << Name(type);
    // The packed copy costs no memory over the GGUF one when rows fill whole groups of 8 (IQ4_XS:
    // 16 bytes a group and super-block, its scales unpacked to bytes).
    const size_t extra = type == DType::kIQ4_XS ? 8 * 2 * 16 : 0;
    EXPECT_EQ(par.MatmulFor(type)->packed_bytes(64, 512),
              64 * RowBytes(*GetDTypeTraits(static_cast<uint32_t>(type)), 512) + extra);
  }
}

TEST_F(Avx2KQuantQ8Test, EqualsTheScalarQ8ReferenceBitwiseOnRandomShapesAndRowSplits) {
  const KernelTable table = avx2::Avx2KernelTable(ExecMode::kParallel);
  std::mt19937 rng(5);
  for (DType type : kKQuants) {
    for (int trial = 0; trial < 12; trial++) {
      const int in_dim = trial == 0   ? 256
                         : trial == 1 ? 2816
                         : trial == 2 ? 5632
                                      : 256 * (1 + int(rng() % 8));
      const int out_dim = 1 + 2 * static_cast<int>(rng() % 19);  // odd, 1..37
      const int n_tokens = 1 + static_cast<int>(rng() % 10);
      const std::vector<uint8_t> w = testing::RandomWeights(type, out_dim, in_dim, rng());
      const std::vector<float> x =
          testing::RandomFloats(size_t(n_tokens) * in_dim, rng(), -2.0f, 2.0f);
      const std::vector<uint8_t> xq = Quantize(table, x, n_tokens, in_dim);
      std::vector<float> want(size_t(n_tokens) * out_dim);
      Q8Ref(type)(w.data(), xq.data(), want.data(), n_tokens, in_dim, out_dim, AllRows(out_dim));
      const int cut = static_cast<int>(rng() % (out_dim + 1));  // splits a group of 8 most times
      EXPECT_EQ(RunSplit(table, type, w, xq, n_tokens, in_dim, out_dim, {cut}), want)
          << Name(type) << " in " << in_dim << " out " << out_dim << " tokens " << n_tokens
          << " cut " << cut;
    }
  }
}

// Decode runs several row groups at once (Q4_K: 4) and prefill tiles of 4 tokens; every batch size
// and row split (tiles of 4 groups, their remainders, ranges starting and ending inside a group)
// must still give each token the reference's bits.
TEST_F(Avx2KQuantQ8Test, EveryBatchSizeAndRowSplitGivesTheReferenceBits) {
  const KernelTable table = avx2::Avx2KernelTable(ExecMode::kParallel);
  std::mt19937 rng(29);
  const int in_dim = 768, out_dim = 8 * 11 + 5, max_tokens = 9;  // 12 groups, the last partial
  for (DType type : kKQuants) {
    const std::vector<uint8_t> w = testing::RandomWeights(type, out_dim, in_dim, rng());
    const std::vector<float> x = testing::RandomFloats(size_t(max_tokens) * in_dim, rng());
    const std::vector<uint8_t> xq = Quantize(table, x, max_tokens, in_dim);
    std::vector<float> want(size_t(max_tokens) * out_dim);
    Q8Ref(type)(w.data(), xq.data(), want.data(), max_tokens, in_dim, out_dim, AllRows(out_dim));
    const std::vector<std::vector<int>> splits = {{}, {8}, {3, 45, 46, 90}, {17, 33, 70}};
    for (int n_tokens : {1, 2, 4, 5, 9}) {
      for (const std::vector<int>& cuts : splits) {
        const std::vector<float> got =
            RunSplit(table, type, w, xq, n_tokens, in_dim, out_dim, cuts);
        EXPECT_EQ(got, std::vector<float>(want.begin(), want.begin() + got.size()))
            << Name(type) << " tokens " << n_tokens << " cuts " << cuts.size();
      }
    }
  }
}

// Every quant at its largest magnitude against activations at +-127 (the int16 partial sums at
// their bounds: Q4_K 16 * 15 * 127, Q5_K 8 * 31 * 127, Q6_K 8 * 32 * 127), with the largest
// scales.
TEST_F(Avx2KQuantQ8Test, EqualsTheReferenceAtTheExtremesOfTheIntegerSums) {
  const KernelTable table = avx2::Avx2KernelTable(ExecMode::kParallel);
  const int in_dim = 512, out_dim = 9, n_tokens = 5;
  for (DType type : kKQuants) {
    const size_t block = GetDTypeTraits(static_cast<uint32_t>(type))->block_bytes;
    // Q4_K / Q5_K: d, dmin, then 12 scale bytes, then quants (Q5_K: high bits, then nibbles).
    // Q6_K: quants, 16 int8 scales, then d.
    // IQ4_XS: d, then 6 bytes of scales, then indices.
    const bool iq4 = type == DType::kIQ4_XS;
    const size_t scales_begin = HasMins(type) ? 4 : iq4 ? 2 : 192;
    const size_t scales_end = scales_begin + (HasMins(type) ? 12 : iq4 ? 6 : 16);
    const uint8_t fills[][2] = {{0x00, 0x80}, {0xff, 0x7f}, {0xff, 0x80}, {0x00, 0xff}};
    for (const auto& [quant_fill, scale_fill] : fills) {
      std::vector<uint8_t> w = testing::RandomWeights(type, out_dim, in_dim, quant_fill);
      for (size_t i = 0; i < w.size(); i++) {
        const size_t off = i % block;
        const bool d_bytes = HasMins(type) ? off < 4 : iq4 ? off < 2 : off >= 208;
        if (!d_bytes) w[i] = off >= scales_begin && off < scales_end ? scale_fill : quant_fill;
      }
      std::vector<float> x(size_t(n_tokens) * in_dim);
      for (size_t i = 0; i < x.size(); i++) x[i] = (i / in_dim) % 2 ? 1.0f : -1.0f;
      const std::vector<uint8_t> xq = Quantize(table, x, n_tokens, in_dim);
      std::vector<float> want(size_t(n_tokens) * out_dim);
      Q8Ref(type)(w.data(), xq.data(), want.data(), n_tokens, in_dim, out_dim, AllRows(out_dim));
      EXPECT_EQ(RunSplit(table, type, w, xq, n_tokens, in_dim, out_dim, {}), want)
          << Name(type) << " quants " << int{quant_fill} << " scales " << int{scale_fill};
    }
  }
}

// |w| elementwise, and for Q4_K / Q5_K the magnitude of the two terms the kernel sums,
// d * sc * q + dmin * m (the weights with dmin negated; RandomWeights draws d, dmin > 0).
std::vector<float> TermMagnitudes(DType type, std::vector<uint8_t> w, int rows, int cols) {
  if (HasMins(type)) {
    const size_t block = GetDTypeTraits(static_cast<uint32_t>(type))->block_bytes;
    for (size_t b = 0; b < w.size() / block; b++) w[b * block + 3] ^= 0x80;  // dmin's sign bit
  }
  std::vector<float> mag = testing::DequantizeAll(type, w, rows, cols);
  for (float& v : mag) v = std::fabs(v);
  return mag;
}

TEST_F(Avx2KQuantQ8Test, StaysWithinTheActivationQuantizationErrorOfTheFloatReference) {
  const KernelTable table = avx2::Avx2KernelTable(ExecMode::kParallel);
  std::mt19937 rng(17);
  for (DType type : kKQuants) {
    for (int trial = 0; trial < 6; trial++) {
      const int in_dim = 256 * (1 + static_cast<int>(rng() % 11));
      const int out_dim = 1 + static_cast<int>(rng() % 37);
      const int n_tokens = 1 + static_cast<int>(rng() % 10);
      const std::vector<uint8_t> w = testing::RandomWeights(type, out_dim, in_dim, rng());
      const std::vector<float> wf = testing::DequantizeAll(type, w, out_dim, in_dim);
      const std::vector<float> mag = TermMagnitudes(type, w, out_dim, in_dim);
      const std::vector<float> x = testing::RandomFloats(size_t(n_tokens) * in_dim, rng());
      const std::vector<uint8_t> xq = Quantize(table, x, n_tokens, in_dim);
      const std::vector<float> got = RunSplit(table, type, w, xq, n_tokens, in_dim, out_dim, {});
      std::vector<float> exact(got.size());
      MatmulF32Ref(wf.data(), x.data(), exact.data(), n_tokens, in_dim, out_dim, AllRows(out_dim));
      for (int t = 0; t < n_tokens; t++) {
        for (int r = 0; r < out_dim; r++) {
          // Quantizing x moves each element by at most half its block's step: sum |w_k| * d_b / 2.
          // Float rounding: 2 roundings per block (4 for Q4_K's / Q5_K's two fmas), each within
          // 2^-24 of a partial sum bounded by the sum of the magnitudes of the terms.
          double quant_bound = 0, abs_terms = 0;
          for (int k = 0; k < in_dim; k++) {
            float amax = 0;
            for (int j = k / 32 * 32; j < k / 32 * 32 + 32; j++) {
              amax = std::max(amax, std::fabs(x[size_t(t) * in_dim + j]));
            }
            quant_bound += std::fabs(wf[size_t(r) * in_dim + k]) * amax / 127 / 2;
            abs_terms +=
                mag[size_t(r) * in_dim + k] * (std::fabs(x[size_t(t) * in_dim + k]) + amax);
          }
          const double rounding = 4.0 * (in_dim / 32) * 0x1p-24 * abs_terms;
          const size_t i = size_t(t) * out_dim + r;
          EXPECT_NEAR(got[i], exact[i], 1.01 * quant_bound + rounding)
              << Name(type) << " in " << in_dim << " t" << t << " r" << r;
        }
      }
    }
  }
}

}  // namespace
}  // namespace smallmind::kernels
