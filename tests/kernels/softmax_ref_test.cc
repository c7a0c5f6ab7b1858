#include "kernels/ref/softmax_ref.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace smallmind::kernels {
namespace {

TEST(SoftmaxRefTest, ComputesNormalisedExponentials) {
  std::vector<float> x = {1, 2, 3};
  SoftmaxRef(x.data(), 3, AllRows(1));
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  EXPECT_NEAR(x[0], std::exp(1.0) / z, 1e-7);
  EXPECT_NEAR(x[1], std::exp(2.0) / z, 1e-7);
  EXPECT_NEAR(x[2], std::exp(3.0) / z, 1e-7);
}

TEST(SoftmaxRefTest, StaysFiniteForHugeLogits) {
  std::vector<float> x = {1000, 1000, -1000};
  SoftmaxRef(x.data(), 3, AllRows(1));
  EXPECT_FLOAT_EQ(x[0], 0.5f);
  EXPECT_FLOAT_EQ(x[1], 0.5f);
  EXPECT_EQ(x[2], 0.0f);
}

TEST(SoftmaxRefTest, NormalisesOnlyTheRowsOfItsRange) {
  std::vector<float> x = {0, 0, 5, 5, 1, 1};  // 3 rows of 2
  SoftmaxRef(x.data(), 2, RowRange{1, 2});
  EXPECT_EQ(x, (std::vector<float>{0, 0, 0.5f, 0.5f, 1, 1}));
}

}  // namespace
}  // namespace smallmind::kernels
