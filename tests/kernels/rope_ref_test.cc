#include "kernels/ref/rope_ref.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace smallmind::kernels {
namespace {

TEST(RopeRefTest, InterleavedRotatesAdjacentPairsByPositionTimesFrequency) {
  // head_dim 4: pair (0,1) has frequency 1, pair (2,3) has 10000^(-2/4) = 0.01.
  std::vector<float> x = {1, 0, 0, 1};
  const int32_t pos[] = {3};
  RopeRef(x.data(), pos, 1, 4, RopeFreqs{}, RopeLayout::kInterleaved, AllRows(1));
  EXPECT_NEAR(x[0], std::cos(3.0), 1e-6);
  EXPECT_NEAR(x[1], std::sin(3.0), 1e-6);
  EXPECT_NEAR(x[2], -std::sin(0.03), 1e-6);
  EXPECT_NEAR(x[3], std::cos(0.03), 1e-6);
}

TEST(RopeRefTest, NeoxRotatesElementIWithElementIPlusHalf) {
  // head_dim 4: pair (0,2) has frequency 1, pair (1,3) has 0.01.
  std::vector<float> x = {1, 0, 0, 1};
  const int32_t pos[] = {3};
  RopeRef(x.data(), pos, 1, 4, RopeFreqs{}, RopeLayout::kNeox, AllRows(1));
  EXPECT_NEAR(x[0], std::cos(3.0), 1e-6);
  EXPECT_NEAR(x[2], std::sin(3.0), 1e-6);
  EXPECT_NEAR(x[1], -std::sin(0.03), 1e-6);
  EXPECT_NEAR(x[3], std::cos(0.03), 1e-6);
}

TEST(RopeRefTest, LeavesPositionZeroUnchanged) {
  std::vector<float> x = {0.5f, -1.5f, 2.0f, 0.25f, 7, 8, 9, 10};
  const std::vector<float> before = x;
  const int32_t pos[] = {0};
  RopeRef(x.data(), pos, 2, 4, RopeFreqs{}, RopeLayout::kInterleaved, AllRows(2));
  EXPECT_EQ(x, before);
}

TEST(RopeRefTest, UsesEachTokensOwnPositionAndOnlyItsRows) {
  // 2 tokens x 2 heads of head_dim 8, rows 1..2 = (token 0, head 1) and (token 1, head 0).
  const int n_heads = 2, head_dim = 8;
  std::vector<float> x(2 * n_heads * head_dim);
  for (size_t i = 0; i < x.size(); i++) x[i] = 0.1f * static_cast<float>(i) - 1.0f;
  const std::vector<float> before = x;
  const int32_t pos[] = {5, 17};
  RopeRef(x.data(), pos, n_heads, head_dim, RopeFreqs{}, RopeLayout::kInterleaved, RowRange{1, 3});
  for (int r = 0; r < 4; r++) {
    const float* in = before.data() + r * head_dim;
    const float* out = x.data() + r * head_dim;
    const bool inside = r == 1 || r == 2;
    const double p = pos[r / n_heads];
    for (int i = 0; i < head_dim; i += 2) {
      const double angle = inside ? p * std::pow(10000.0, -static_cast<double>(i) / head_dim) : 0;
      EXPECT_NEAR(out[i], in[i] * std::cos(angle) - in[i + 1] * std::sin(angle), 1e-5);
      EXPECT_NEAR(out[i + 1], in[i] * std::sin(angle) + in[i + 1] * std::cos(angle), 1e-5);
    }
  }
}

// llama.cpp's rope_freqs (freq_factors) divide pair i's frequency by factors[i]; its freq_scale
// (linear scaling) multiplies every frequency: at position p pair i turns by
// p * scale * theta^(-2i / head_dim) / factors[i].
TEST(RopeRefTest, FactorsDivideAndScaleMultipliesEachPairsFrequency) {
  const int head_dim = 8;
  const float factors[] = {1.0f, 2.0f, 8.0f, 32.0f};
  for (RopeLayout layout : {RopeLayout::kInterleaved, RopeLayout::kNeox}) {
    for (float scale : {1.0f, 0.25f}) {
      std::vector<float> x(head_dim);
      for (int i = 0; i < head_dim; i++) x[i] = 0.3f * static_cast<float>(i) - 0.7f;
      const std::vector<float> in = x;
      const int32_t pos[] = {41};
      RopeRef(x.data(), pos, 1, head_dim, RopeFreqs{500000.0f, scale, factors}, layout, AllRows(1));
      for (int i = 0; i < head_dim / 2; i++) {
        const double angle = 41.0 * scale * std::pow(500000.0, -2.0 * i / head_dim) / factors[i];
        const int a = layout == RopeLayout::kInterleaved ? 2 * i : i;
        const int b = layout == RopeLayout::kInterleaved ? 2 * i + 1 : i + head_dim / 2;
        EXPECT_NEAR(x[a], in[a] * std::cos(angle) - in[b] * std::sin(angle), 1e-5) << i;
        EXPECT_NEAR(x[b], in[a] * std::sin(angle) + in[b] * std::cos(angle), 1e-5) << i;
      }
    }
  }
}

// Factors of all ones and scale 1 are plain RoPE, bit for bit.
TEST(RopeRefTest, UnitFactorsAreBitwisePlainRope) {
  const int n_heads = 2, head_dim = 16;
  std::vector<float> x(3 * n_heads * head_dim);
  for (size_t i = 0; i < x.size(); i++) x[i] = 0.01f * static_cast<float>(i * 7 % 100) - 0.5f;
  std::vector<float> y = x;
  const std::vector<float> ones(head_dim / 2, 1.0f);
  const int32_t pos[] = {0, 9, 300};
  RopeRef(x.data(), pos, n_heads, head_dim, RopeFreqs{}, RopeLayout::kNeox, AllRows(6));
  RopeRef(y.data(), pos, n_heads, head_dim, RopeFreqs{10000.0f, 1.0f, ones.data()},
          RopeLayout::kNeox, AllRows(6));
  EXPECT_EQ(x, y);
}

// Partial rotary (llama.cpp's n_dims < head_dim): the first rot_dims dims rotate exactly as a
// rot_dims-wide head would (frequencies over rot_dims, NeoX pairs (i, i + rot_dims / 2)), the
// others are left as they were; mscale (llama.cpp's attn_factor) multiplies cos and sin.
TEST(RopeRefTest, PartialRotaryRotatesTheFirstDimsAsTheirOwnHeadAndKeepsTheRest) {
  const int n_heads = 2, head_dim = 16, rot = 12;
  for (RopeLayout layout : {RopeLayout::kInterleaved, RopeLayout::kNeox}) {
    for (float mscale : {1.0f, 1.25f}) {
      std::vector<float> x(2 * n_heads * head_dim);
      for (size_t i = 0; i < x.size(); i++) x[i] = 0.02f * static_cast<float>(i * 5 % 77) - 0.6f;
      const std::vector<float> in = x;
      const int32_t pos[] = {3, 250};
      RopeFreqs freqs{.theta = 10000.0f, .rot_dims = rot, .mscale = mscale};
      RopeRef(x.data(), pos, n_heads, head_dim, freqs, layout, AllRows(4));
      for (int r = 0; r < 4; r++) {
        // The same rows as rot-wide heads, without mscale, then scaled.
        std::vector<float> want(in.begin() + r * head_dim, in.begin() + r * head_dim + rot);
        RopeRef(want.data(), &pos[r / n_heads], 1, rot, RopeFreqs{}, layout, AllRows(1));
        for (int i = 0; i < rot; i++) {
          EXPECT_NEAR(x[r * head_dim + i], mscale * want[i], 1e-5) << r << " " << i;
        }
        for (int i = rot; i < head_dim; i++) {
          EXPECT_EQ(x[r * head_dim + i], in[r * head_dim + i]) << "passes through: " << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace smallmind::kernels
