#include "worker/sample/rng.h"

#include <gtest/gtest.h>

#include <unordered_set>

namespace smallmind::worker {
namespace {

TEST(RngTest, SameSeedAndIndexGiveTheSameNumberWithNoHiddenState) {
  static_assert(CounterRandomBits(42, 7) == CounterRandomBits(42, 7));
  EXPECT_EQ(UniformDouble(42, 7), UniformDouble(42, 7));
  // Draw 7 does not depend on whether draws 0..6 were taken first.
  for (uint64_t i = 0; i < 7; ++i) (void)UniformDouble(42, i);
  EXPECT_EQ(UniformDouble(42, 7), UniformDouble(42, 7));
}

TEST(RngTest, DistinctIndicesAndSeedsGiveDistinctStreams) {
  std::unordered_set<uint64_t> seen;
  for (uint64_t i = 0; i < 10000; ++i) seen.insert(CounterRandomBits(1, i));
  EXPECT_EQ(seen.size(), 10000u);
  int same = 0;
  for (uint64_t i = 0; i < 1000; ++i) same += CounterRandomBits(1, i) == CounterRandomBits(2, i);
  EXPECT_EQ(same, 0);
  // Seed 0 is an ordinary seed, not a degenerate one.
  EXPECT_NE(CounterRandomBits(0, 0), 0u);
  EXPECT_NE(CounterRandomBits(0, 0), CounterRandomBits(0, 1));
}

TEST(RngTest, UniformsStayInTheUnitIntervalAndAreUnbiased) {
  constexpr int kDraws = 100000;
  double sum_f = 0;
  double sum_d = 0;
  int buckets[10] = {};
  for (int i = 0; i < kDraws; ++i) {
    const float f = UniformFloat(123, i);
    const double d = UniformDouble(123, i);
    ASSERT_GE(f, 0.0f);
    ASSERT_LT(f, 1.0f);
    ASSERT_GE(d, 0.0);
    ASSERT_LT(d, 1.0);
    sum_f += f;
    sum_d += d;
    ++buckets[static_cast<int>(d * 10)];
  }
  EXPECT_NEAR(sum_f / kDraws, 0.5, 0.005);  // sd of the mean is 0.0009
  EXPECT_NEAR(sum_d / kDraws, 0.5, 0.005);
  for (int b : buckets) EXPECT_NEAR(b, kDraws / 10, 600);  // sd ~95 per bucket
}

}  // namespace
}  // namespace smallmind::worker
