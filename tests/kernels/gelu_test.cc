// GeGLU (gemma's feed-forward activation) in every ISA: GeGluRef follows llama.cpp's GELU table
// (the tanh formula per half, the +-10 rule), and the AVX2 and AVX-512 kernels give its bits for
// every width from 1 to 80 and model widths, gates over and past (-10, 10), signed zeros, several
// tokens in one call from a row past the first. The scale and final soft-cap references too.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/avx512/kernels_avx512.h"
#include "kernels/dispatch.h"
#include "kernels/quant_blocks.h"
#include "kernels/ref/elementwise_ref.h"
#include "kernels/ref/gelu_ref.h"
#include "tests/kernels/random_weights.h"

namespace smallmind::kernels {
namespace {

TEST(GeluTest, TheTableHoldsTheTanhGeluOfEveryHalfRoundedToHalf) {
  const uint16_t* table = GeluF16Table();
  for (float x : {-3.0f, -1.0f, -0.5f, 0.0f, 0.25f, 1.0f, 2.5f, 7.0f}) {
    const double g = 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * x * (1.0 + 0.044715 * x * x)));
    const float got = Fp16ToFp32(table[Fp32ToFp16(x)]);
    EXPECT_NEAR(got, g, 1e-3 * std::fabs(g) + 1e-6) << x;
  }
  EXPECT_EQ(table[1 << 16], 0);  // the spare entry past the last half
}

TEST(GeluTest, GeluF16RefCutsAtTenAndRoundsTheInputToHalf) {
  EXPECT_EQ(GeluF16Ref(-10.0f), 0.0f);
  EXPECT_EQ(GeluF16Ref(-50.0f), 0.0f);
  EXPECT_EQ(GeluF16Ref(10.0f), 10.0f);
  EXPECT_EQ(GeluF16Ref(123.25f), 123.25f);
  // 1 + 2^-12 rounds to the half 1: the same value as GELU(1) from the table.
  EXPECT_EQ(GeluF16Ref(1.0f + 0x1p-12f), GeluF16Ref(1.0f));
  EXPECT_EQ(GeluF16Ref(1.0f), Fp16ToFp32(Fp32ToFp16(GeluTanhRef(1.0f))));
}

TEST(GeluTest, GeGluRefMultipliesTheGeluOfGateByUpOnItsTokens) {
  std::vector<float> gate = {1.0f, 2.0f, -1.0f, 0.5f};
  const std::vector<float> up = {3.0f, 3.0f, 2.0f, -4.0f};
  GeGluRef(gate.data(), up.data(), 2, RowRange{1, 2});
  EXPECT_EQ(gate[0], 1.0f);  // token 0 untouched
  EXPECT_EQ(gate[1], 2.0f);
  EXPECT_EQ(gate[2], GeluF16Ref(-1.0f) * 2.0f);
  EXPECT_EQ(gate[3], GeluF16Ref(0.5f) * -4.0f);
}

TEST(GeluTest, GeluRefTakesTheTableGeluOfItsTokensOnly) {
  std::vector<float> x = {1.0f, 2.0f, -1.0f, 0.5f, 11.0f, -10.5f};
  GeluRef(x.data(), 2, RowRange{1, 3});
  EXPECT_EQ(x[0], 1.0f);  // token 0 untouched
  EXPECT_EQ(x[1], 2.0f);
  EXPECT_EQ(x[2], GeluF16Ref(-1.0f));
  EXPECT_EQ(x[3], GeluF16Ref(0.5f));
  EXPECT_NEAR(x[3], 0.5f * 0.5f * (1.0f + std::erf(0.5f / std::sqrt(2.0f))), 2e-3f);
  EXPECT_EQ(x[4], 11.0f) << "x >= 10 passes";
  EXPECT_EQ(x[5], 0.0f) << "x <= -10 is 0";
}

// Gates across the table and its edges, for `hidden` wide rows of 3 tokens.
std::vector<float> Gates(int hidden, std::mt19937& rng) {
  std::vector<float> gate = testing::RandomFloats(size_t(3) * hidden, hidden, -12, 12);
  for (float& g : gate) {
    switch (rng() % 16) {
      case 0: g = -10.0f; break;
      case 1: g = 10.0f; break;
      case 2: g = -0.0f; break;
      case 3: g = 9.999f; break;  // rounds to the half 10 inside the table's range
      case 4: g = -9.999f; break;
      case 5: g *= 1e-6f; break;  // half subnormals
      case 6: g = 65519.0f; break;
      default: break;
    }
  }
  return gate;
}

void ExpectSameBits(const std::vector<float>& got, const std::vector<float>& want,
                    const std::vector<float>& gate, int hidden) {
  for (size_t i = 0; i < gate.size(); i++) {
    ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
        << "hidden " << hidden << " element " << i << " (gate " << gate[i] << "): " << got[i]
        << " vs " << want[i];
  }
}

std::vector<int> Widths() {
  std::vector<int> widths;
  for (int w = 1; w <= 80; w++) widths.push_back(w);
  for (int w : {127, 128, 129, 1152, 6912, 9216}) widths.push_back(w);
  return widths;
}

TEST(GeluTest, GeGluAvx2HasTheReferenceBits) {
  if (!CpuSupports(Isa::kAvx2)) GTEST_SKIP() << "this CPU has no AVX2";
  std::mt19937 rng(5);
  for (int hidden : Widths()) {
    const std::vector<float> gate = Gates(hidden, rng);
    const std::vector<float> up = testing::RandomFloats(gate.size(), hidden + 1, -3, 3);
    std::vector<float> want = gate, got = gate;
    GeGluRef(want.data(), up.data(), hidden, RowRange{1, 3});
    avx2::GeGluAvx2(got.data(), up.data(), hidden, RowRange{1, 3});
    ExpectSameBits(got, want, gate, hidden);
  }
}

TEST(GeluTest, GeGluAvx512HasTheReferenceBits) {
  if (!CpuSupports(Isa::kAvx512)) GTEST_SKIP() << "this CPU has no AVX-512 (F/BW/DQ/VL/VNNI)";
  ASSERT_EQ(avx512::Avx512KernelTable(ExecMode::kDeterministic).geglu, &avx512::GeGluAvx512);
  std::mt19937 rng(6);
  for (int hidden : Widths()) {
    const std::vector<float> gate = Gates(hidden, rng);
    const std::vector<float> up = testing::RandomFloats(gate.size(), hidden + 1, -3, 3);
    std::vector<float> want = gate, got = gate;
    GeGluRef(want.data(), up.data(), hidden, RowRange{1, 3});
    avx512::GeGluAvx512(got.data(), up.data(), hidden, RowRange{1, 3});
    ExpectSameBits(got, want, gate, hidden);
  }
}

TEST(GeluTest, ScaleAndSoftCapRowsTouchOnlyTheirTokens) {
  std::vector<float> x = {1.0f, -2.0f, 60.0f, -0.5f};
  ScaleRef(x.data(), 2, 4.0f, RowRange{0, 1});
  EXPECT_EQ(x[0], 4.0f);
  EXPECT_EQ(x[1], -8.0f);
  EXPECT_EQ(x[2], 60.0f);
  SoftCapRowsRef(x.data(), 2, 30.0f, RowRange{1, 2});
  EXPECT_EQ(x[0], 4.0f);
  EXPECT_FLOAT_EQ(x[2], 30.0f * std::tanh(2.0f));
  EXPECT_FLOAT_EQ(x[3], 30.0f * std::tanh(-0.5f / 30.0f));
  EXPECT_LT(x[2], 30.0f);
}

}  // namespace
}  // namespace smallmind::kernels
