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
  RopeRef(x.data(), pos, 1, 4, 10000.0f, RopeLayout::kInterleaved, AllRows(1));
  EXPECT_NEAR(x[0], std::cos(3.0), 1e-6);
  EXPECT_NEAR(x[1], std::sin(3.0), 1e-6);
  EXPECT_NEAR(x[2], -std::sin(0.03), 1e-6);
  EXPECT_NEAR(x[3], std::cos(0.03), 1e-6);
}

TEST(RopeRefTest, NeoxRotatesElementIWithElementIPlusHalf) {
  // head_dim 4: pair (0,2) has frequency 1, pair (1,3) has 0.01.
  std::vector<float> x = {1, 0, 0, 1};
  const int32_t pos[] = {3};
  RopeRef(x.data(), pos, 1, 4, 10000.0f, RopeLayout::kNeox, AllRows(1));
  EXPECT_NEAR(x[0], std::cos(3.0), 1e-6);
  EXPECT_NEAR(x[2], std::sin(3.0), 1e-6);
  EXPECT_NEAR(x[1], -std::sin(0.03), 1e-6);
  EXPECT_NEAR(x[3], std::cos(0.03), 1e-6);
}

TEST(RopeRefTest, LeavesPositionZeroUnchanged) {
  std::vector<float> x = {0.5f, -1.5f, 2.0f, 0.25f, 7, 8, 9, 10};
  const std::vector<float> before = x;
  const int32_t pos[] = {0};
  RopeRef(x.data(), pos, 2, 4, 10000.0f, RopeLayout::kInterleaved, AllRows(2));
  EXPECT_EQ(x, before);
}

TEST(RopeRefTest, UsesEachTokensOwnPositionAndOnlyItsRows) {
  // 2 tokens x 2 heads of head_dim 8, rows 1..2 = (token 0, head 1) and (token 1, head 0).
  const int n_heads = 2, head_dim = 8;
  std::vector<float> x(2 * n_heads * head_dim);
  for (size_t i = 0; i < x.size(); i++) x[i] = 0.1f * static_cast<float>(i) - 1.0f;
  const std::vector<float> before = x;
  const int32_t pos[] = {5, 17};
  RopeRef(x.data(), pos, n_heads, head_dim, 10000.0f, RopeLayout::kInterleaved, RowRange{1, 3});
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

}  // namespace
}  // namespace smallmind::kernels
