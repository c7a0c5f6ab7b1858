#include "kernels/ref/layernorm_ref.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace smallmind::kernels {
namespace {

TEST(LayerNormRefTest, CentresScalesWeightsAndAddsTheBias) {
  // mean 2.5, biased variance 1.25: (x - 2.5) / sqrt(1.25)
  const std::vector<float> x = {1, 2, 3, 4};
  const std::vector<float> weight = {1, 2, 1, 1};
  const std::vector<float> bias = {0, 0, 1, -1};
  std::vector<float> out(4);
  LayerNormRef(x.data(), weight.data(), bias.data(), out.data(), 4, 0.0f, AllRows(1));
  const float s = 1.0f / std::sqrt(1.25f);
  EXPECT_FLOAT_EQ(out[0], -1.5f * s);
  EXPECT_FLOAT_EQ(out[1], 2 * -0.5f * s);
  EXPECT_FLOAT_EQ(out[2], 0.5f * s + 1);
  EXPECT_FLOAT_EQ(out[3], 1.5f * s - 1);
  LayerNormRef(x.data(), weight.data(), nullptr, out.data(), 4, 0.0f, AllRows(1));
  EXPECT_FLOAT_EQ(out[2], 0.5f * s) << "no bias";
}

TEST(LayerNormRefTest, MatchesFloat64ReferenceWithEpsilonInPlaceOnItsTokens) {
  const int dim = 7, n = 3;
  const float eps = 1e-12f;
  std::vector<float> x(n * dim), weight(dim), bias(dim);
  for (int i = 0; i < n * dim; i++) x[i] = std::sin(0.9f * i) * (i % 4 + 1) + 3.0f;
  for (int i = 0; i < dim; i++) weight[i] = 0.5f + 0.1f * i;
  for (int i = 0; i < dim; i++) bias[i] = 0.01f * i - 0.02f;
  std::vector<float> out = x;
  LayerNormRef(out.data(), weight.data(), bias.data(), out.data(), dim, eps, RowRange{1, 3});
  for (int j = 0; j < dim; j++) EXPECT_EQ(out[j], x[j]) << "token 0 untouched";
  for (int t = 1; t < n; t++) {
    double mean = 0, var = 0;
    for (int j = 0; j < dim; j++) mean += x[t * dim + j];
    mean /= dim;
    for (int j = 0; j < dim; j++) var += (x[t * dim + j] - mean) * (x[t * dim + j] - mean);
    const double inv = 1.0 / std::sqrt(var / dim + eps);
    for (int j = 0; j < dim; j++) {
      EXPECT_NEAR(out[t * dim + j], (x[t * dim + j] - mean) * inv * weight[j] + bias[j], 1e-5)
          << t << "," << j;
    }
  }
}

}  // namespace
}  // namespace smallmind::kernels
