#include "kernels/ref/elementwise_ref.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace smallmind::kernels {
namespace {

TEST(ElementwiseRefTest, SiluIsXTimesSigmoid) {
  EXPECT_EQ(Silu(0.0f), 0.0f);
  EXPECT_NEAR(Silu(2.0f), 2.0 / (1.0 + std::exp(-2.0)), 1e-6);
  EXPECT_NEAR(Silu(-3.0f), -3.0 / (1.0 + std::exp(3.0)), 1e-6);
}

TEST(ElementwiseRefTest, SwiGluMultipliesSiluOfGateByUpOnItsTokens) {
  std::vector<float> gate = {1, -1, 2, 0.5f};  // 2 tokens of hidden 2
  const std::vector<float> up = {2, 3, 4, 5};
  SwiGluRef(gate.data(), up.data(), 2, RowRange{1, 2});
  EXPECT_EQ(gate[0], 1.0f);
  EXPECT_EQ(gate[1], -1.0f);
  EXPECT_NEAR(gate[2], 2.0 / (1.0 + std::exp(-2.0)) * 4, 1e-6);
  EXPECT_NEAR(gate[3], 0.5 / (1.0 + std::exp(-0.5)) * 5, 1e-6);
}

TEST(ElementwiseRefTest, AddAccumulatesDeltaIntoItsTokens) {
  std::vector<float> x = {1, 2, 3, 4, 5, 6};  // 3 tokens of dim 2
  const std::vector<float> delta = {10, 10, 20, 20, 30, 30};
  AddRef(x.data(), delta.data(), 2, RowRange{0, 2});
  EXPECT_EQ(x, (std::vector<float>{11, 12, 23, 24, 5, 6}));
}

TEST(ElementwiseRefTest, AddBiasAddsTheSameVectorToEachOfItsTokens) {
  std::vector<float> x = {1, 2, 3, 4, 5, 6};  // 3 tokens of dim 2
  const std::vector<float> bias = {10, -1};
  AddBiasRef(x.data(), bias.data(), 2, RowRange{1, 3});
  EXPECT_EQ(x, (std::vector<float>{1, 2, 13, 3, 15, 5}));
}

}  // namespace
}  // namespace smallmind::kernels
