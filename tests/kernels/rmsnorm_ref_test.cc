#include "kernels/ref/rmsnorm_ref.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace smallmind::kernels {
namespace {

TEST(RmsNormRefTest, ScalesByInverseRootMeanSquareAndWeight) {
  // mean(x^2) = (9 + 16) / 2 = 12.5 -> x / sqrt(12.5 + eps)
  const std::vector<float> x = {3, 4};
  const std::vector<float> weight = {1, 2};
  std::vector<float> out(2);
  RmsNormRef(x.data(), weight.data(), out.data(), 2, 0.0f, AllRows(1));
  EXPECT_FLOAT_EQ(out[0], 3 / std::sqrt(12.5f));
  EXPECT_FLOAT_EQ(out[1], 2 * 4 / std::sqrt(12.5f));
}

TEST(RmsNormRefTest, MatchesFloat64ReferencePerTokenWithEpsilon) {
  const int dim = 5, n = 3;
  const float eps = 1e-5f;
  std::vector<float> x(n * dim), weight(dim);
  for (int i = 0; i < n * dim; i++) x[i] = std::sin(0.7f * i) * (i % 3 + 1) * 0.01f;
  for (int i = 0; i < dim; i++) weight[i] = 0.5f + 0.1f * i;
  std::vector<float> out(n * dim);
  RmsNormRef(x.data(), weight.data(), out.data(), dim, eps, AllRows(n));
  for (int t = 0; t < n; t++) {
    double ss = 0;
    for (int j = 0; j < dim; j++) ss += double{x[t * dim + j]} * x[t * dim + j];
    const double inv = 1.0 / std::sqrt(ss / dim + eps);
    for (int j = 0; j < dim; j++) {
      EXPECT_NEAR(out[t * dim + j], weight[j] * x[t * dim + j] * inv, 1e-5) << t << "," << j;
    }
  }
}

TEST(RmsNormRefTest, WorksInPlaceAndOnlyOnItsTokens) {
  std::vector<float> x = {1, 1, 2, 2, 5, 5};  // 3 tokens of dim 2
  const std::vector<float> weight = {1, 1};
  RmsNormRef(x.data(), weight.data(), x.data(), 2, 0.0f, RowRange{1, 2});
  EXPECT_EQ(x, (std::vector<float>{1, 1, 1, 1, 5, 5}));
}

}  // namespace
}  // namespace smallmind::kernels
