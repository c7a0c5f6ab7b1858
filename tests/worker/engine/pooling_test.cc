// Pooling of hidden states (mean, [CLS], last token) and L2 normalisation, by hand-computed values.
#include "worker/engine/pooling.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace smallmind::worker {
namespace {

// Three tokens of width 2.
const std::vector<float> kHidden = {1.0f, 2.0f, 3.0f, -4.0f, 8.0f, 5.0f};

TEST(PoolingTest, MeanClsAndLastPickTheirRows) {
  std::vector<float> out(2);
  PoolHidden(PoolingType::kMean, kHidden.data(), 3, 2, out.data());
  EXPECT_FLOAT_EQ(out[0], 4.0f);
  EXPECT_FLOAT_EQ(out[1], 1.0f);
  PoolHidden(PoolingType::kCls, kHidden.data(), 3, 2, out.data());
  EXPECT_EQ(out, (std::vector<float>{1.0f, 2.0f}));
  PoolHidden(PoolingType::kLast, kHidden.data(), 3, 2, out.data());
  EXPECT_EQ(out, (std::vector<float>{8.0f, 5.0f}));
  PoolHidden(PoolingType::kMean, kHidden.data(), 1, 2, out.data());
  EXPECT_EQ(out, (std::vector<float>{1.0f, 2.0f})) << "one token: its own state";
}

TEST(PoolingTest, OnlyMeanClsAndLastPoolAnInput) {
  EXPECT_TRUE(PoolsInput(PoolingType::kMean));
  EXPECT_TRUE(PoolsInput(PoolingType::kCls));
  EXPECT_TRUE(PoolsInput(PoolingType::kLast));
  EXPECT_FALSE(PoolsInput(PoolingType::kNone));
  EXPECT_FALSE(PoolsInput(PoolingType::kRank));
}

TEST(PoolingTest, L2NormalizeGivesUnitLengthAndLeavesZeroAlone) {
  std::vector<float> v = {3.0f, -4.0f};
  L2Normalize(v);
  EXPECT_FLOAT_EQ(v[0], 0.6f);
  EXPECT_FLOAT_EQ(v[1], -0.8f);
  std::vector<float> zero = {0.0f, 0.0f, 0.0f};
  L2Normalize(zero);
  EXPECT_EQ(zero, (std::vector<float>{0.0f, 0.0f, 0.0f}));
  for (float x : zero) EXPECT_FALSE(std::isnan(x));
}

}  // namespace
}  // namespace smallmind::worker
