#include "kernels/ref/elementwise_ref.h"

#include <gtest/gtest.h>

#include <algorithm>
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

// gpt-oss's clamped SwiGLU (llama.cpp's ggml_swiglu_oai, alpha 1.702, limit 7): the gate clamped
// from above only, up to [-limit, limit], then g * sigmoid(alpha g) * (u + 1); only its tokens.
TEST(ElementwiseRefTest, SwiGluOaiClampsGateAboveAndUpBothWaysThenAddsOneToUp) {
  constexpr float kAlpha = 1.702f, kLimit = 7.0f;
  std::vector<float> gate = {5, 5, 1.5f, 9, -20, 0.25f};  // 3 tokens of hidden 2
  const std::vector<float> up = {1, 1, -9, 2, 30, -0.5f};
  SwiGluOaiRef(gate.data(), up.data(), 2, kAlpha, kLimit, RowRange{1, 3});
  const auto want = [&](double g, double u) {
    g = std::min(g, 7.0);
    u = std::clamp(u, -7.0, 7.0);
    return g / (1.0 + std::exp(-1.702 * g)) * (u + 1.0);
  };
  EXPECT_EQ(gate[0], 5.0f);  // token 0 untouched
  EXPECT_EQ(gate[1], 5.0f);
  EXPECT_NEAR(gate[2], want(1.5, -9), 1e-5);  // up clamped to -7: (1.5 sig) * -6
  EXPECT_NEAR(gate[3], want(9, 2), 1e-5);     // gate clamped to 7
  EXPECT_NEAR(gate[4], want(-20, 30), 1e-5);  // a negative gate is not clamped: ~0
  EXPECT_NEAR(gate[5], want(0.25, -0.5), 1e-6);
  EXPECT_NEAR(gate[3], 7.0 / (1.0 + std::exp(-1.702 * 7.0)) * 3.0, 1e-5);
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
