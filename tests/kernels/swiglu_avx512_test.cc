// The AVX-512 SwiGLU (and the clamped one) gives SwiGluAvx2's (SwiGluOaiAvx2's) bits: every width
// from 1 to 80 (whole 16-wide groups and tails of every size) and model widths, gates from deep in
// silu's negative tail to far past its linear part (exp under- and overflow clamped), signed zeros;
// several tokens in one call and a token range that starts past the first row. Runs where the CPU
// has AVX-512.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/avx512/kernels_avx512.h"
#include "kernels/dispatch.h"
#include "tests/kernels/random_weights.h"

namespace smallmind::kernels {
namespace {

TEST(SwiGluAvx512Test, EveryWidthAndGateHasTheAvx2KernelsBits) {
  if (!CpuSupports(Isa::kAvx512)) GTEST_SKIP() << "this CPU has no AVX-512 (F/BW/DQ/VL/VNNI)";
  ASSERT_EQ(avx512::Avx512KernelTable(ExecMode::kDeterministic).swiglu, &avx512::SwiGluAvx512);
  std::vector<int> widths;
  for (int w = 1; w <= 80; w++) widths.push_back(w);
  for (int w : {127, 128, 129, 2048, 5632, 11008}) widths.push_back(w);
  std::mt19937 rng(11);
  for (int hidden : widths) {
    constexpr int kTokens = 3;
    std::vector<float> gate = testing::RandomFloats(size_t(kTokens) * hidden, hidden, -12, 12);
    const std::vector<float> up = testing::RandomFloats(gate.size(), hidden + 1, -3, 3);
    for (float& g : gate) {  // some gates at the edges
      switch (rng() % 16) {
        case 0: g = -100.0f; break;  // exp(-g) clamps at exp(88.38): silu ~ -0
        case 1: g = 95.0f; break;    // exp(-g) clamps the other way: silu = g
        case 2: g = -0.0f; break;
        case 3: g = 0.0f; break;
        case 4: g = -88.5f; break;
        case 5: g *= 1e-7f; break;
        default: break;
      }
    }
    std::vector<float> want = gate, got = gate;
    avx2::SwiGluAvx2(want.data(), up.data(), hidden, RowRange{1, kTokens});
    avx512::SwiGluAvx512(got.data(), up.data(), hidden, RowRange{1, kTokens});
    for (size_t i = 0; i < gate.size(); i++) {
      ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
          << "hidden " << hidden << " element " << i << " (gate " << gate[i] << "): " << got[i]
          << " vs " << want[i];
    }
  }
}

// gpt-oss's clamped SwiGLU: the same widths and edge gates, ups past the limit on both sides.
TEST(SwiGluAvx512Test, TheClampedSwiGluHasTheAvx2KernelsBits) {
  if (!CpuSupports(Isa::kAvx512)) GTEST_SKIP() << "this CPU has no AVX-512 (F/BW/DQ/VL/VNNI)";
  ASSERT_EQ(avx512::Avx512KernelTable(ExecMode::kDeterministic).swiglu_oai,
            &avx512::SwiGluOaiAvx512);
  std::mt19937 rng(12);
  for (int hidden = 1; hidden <= 2880; hidden += hidden < 80 ? 1 : 700) {
    constexpr int kTokens = 3;
    std::vector<float> gate = testing::RandomFloats(size_t(kTokens) * hidden, hidden, -12, 12);
    const std::vector<float> up = testing::RandomFloats(gate.size(), hidden + 1, -10, 10);
    for (float& g : gate) {
      switch (rng() % 8) {
        case 0: g = -100.0f; break;
        case 1: g = 95.0f; break;
        case 2: g = -0.0f; break;
        case 3: g = 7.0f; break;
        default: break;
      }
    }
    std::vector<float> want = gate, got = gate;
    avx2::SwiGluOaiAvx2(want.data(), up.data(), hidden, 1.702f, 7.0f, RowRange{1, kTokens});
    avx512::SwiGluOaiAvx512(got.data(), up.data(), hidden, 1.702f, 7.0f, RowRange{1, kTokens});
    for (size_t i = 0; i < gate.size(); i++) {
      ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
          << "hidden " << hidden << " element " << i << " (gate " << gate[i] << ")";
    }
  }
}

}  // namespace
}  // namespace smallmind::kernels
