// The router of a mixture of experts (worker/engine/moe_ffn.h): softmax, top-k with llama.cpp's
// tie order, renormalised weights.
#include "worker/engine/moe_ffn.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace smallmind::worker {
namespace {

TEST(MoeFfnTest, RouteTokenPicksTheTopKByProbabilityLowerIndexFirstOnATie) {
  std::vector<float> scores = {0.5f, 2.0f, -1.0f, 2.0f, 1.0f};
  int32_t experts[3];
  float weights[3];
  RouteToken(scores.data(), 5, 3, /*normalize=*/false, experts, weights);
  EXPECT_EQ(experts[0], 1);  // tied with 3: the lower index first
  EXPECT_EQ(experts[1], 3);
  EXPECT_EQ(experts[2], 4);
  // The scores became their softmax, and the weights are those probabilities.
  double sum = 0;
  for (float p : scores) sum += p;
  EXPECT_NEAR(sum, 1.0, 1e-6);
  const double z = std::exp(0.5) + 2 * std::exp(2.0) + std::exp(-1.0) + std::exp(1.0);
  EXPECT_NEAR(weights[0], std::exp(2.0) / z, 1e-6);
  EXPECT_EQ(weights[0], weights[1]);
  EXPECT_NEAR(weights[2], std::exp(1.0) / z, 1e-6);
}

TEST(MoeFfnTest, RouteTokenRenormalisesTheKWeightsToSumOneWhenAsked) {
  std::vector<float> scores = {0.0f, std::log(3.0f), -5.0f, 0.0f};
  int32_t experts[2];
  float weights[2];
  RouteToken(scores.data(), 4, 2, /*normalize=*/true, experts, weights);
  EXPECT_EQ(experts[0], 1);
  EXPECT_EQ(experts[1], 0);  // 0 and 3 tie: 0
  EXPECT_NEAR(weights[0], 0.75f, 1e-6);
  EXPECT_NEAR(weights[1], 0.25f, 1e-6);
}

TEST(MoeFfnTest, RouteTokenWithKEqualToTheExpertCountTakesThemAllInOrderOfProbability) {
  std::vector<float> scores = {-1.0f, 3.0f, 1.0f};
  int32_t experts[3];
  float weights[3];
  RouteToken(scores.data(), 3, 3, /*normalize=*/true, experts, weights);
  EXPECT_EQ(experts[0], 1);
  EXPECT_EQ(experts[1], 2);
  EXPECT_EQ(experts[2], 0);
  EXPECT_NEAR(weights[0] + weights[1] + weights[2], 1.0f, 1e-6);
}

// gpt-oss (ExpertGating::kTopKSoftmax, llama.cpp's SOFTMAX_WEIGHT): the top k by raw score (ties:
// the lower index), then the softmax over those k scores only; the scores stay as they were.
TEST(MoeFfnTest, TopKSoftmaxPicksByScoreThenSoftmaxesOnlyTheChosen) {
  std::vector<float> scores = {0.5f, 2.0f, -1.0f, 2.0f, 1.0f};
  const std::vector<float> before = scores;
  int32_t experts[3];
  float weights[3];
  RouteToken(scores.data(), 5, 3, /*normalize=*/false, experts, weights,
             ExpertGating::kTopKSoftmax);
  EXPECT_EQ(experts[0], 1);
  EXPECT_EQ(experts[1], 3);
  EXPECT_EQ(experts[2], 4);
  EXPECT_EQ(scores, before);
  const double z = 2 * std::exp(2.0) + std::exp(1.0);  // only the three chosen
  EXPECT_NEAR(weights[0], std::exp(2.0) / z, 1e-6);
  EXPECT_EQ(weights[0], weights[1]);
  EXPECT_NEAR(weights[2], std::exp(1.0) / z, 1e-6);
  // Softmax then top-k would have given the chosen experts less than 1 in all.
  std::vector<float> again = before;
  float plain[3];
  RouteToken(again.data(), 5, 3, false, experts, plain);
  EXPECT_LT(plain[0] + plain[1] + plain[2], 0.95f);
  EXPECT_NEAR(weights[0] + weights[1] + weights[2], 1.0f, 1e-6);
}

}  // namespace
}  // namespace smallmind::worker
