#include "worker/kv/block_pool.h"

#include <gtest/gtest.h>

namespace smallmind::worker {
namespace {

TEST(BlockPoolTest, HandsOutEveryBlockOnceThenReportsExhaustion) {
  BlockPool pool(3);
  std::vector<int32_t> got;
  for (int i = 0; i < 3; ++i) got.push_back(*pool.Allocate());
  EXPECT_EQ(got, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_FALSE(pool.Allocate().has_value());
  EXPECT_EQ(pool.num_used(), 3);
}

TEST(BlockPoolTest, AllocateNIsAllOrNothing) {
  BlockPool pool(4);
  std::vector<int32_t> a;
  EXPECT_TRUE(pool.AllocateN(3, &a));
  std::vector<int32_t> b;
  EXPECT_FALSE(pool.AllocateN(2, &b));
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(pool.num_free(), 1);
}

TEST(BlockPoolTest, SharedBlockIsFreedOnlyAfterLastRelease) {
  BlockPool pool(1);
  int32_t id = *pool.Allocate();
  pool.AddRef(id);
  pool.Release(id);
  EXPECT_EQ(pool.num_free(), 0);
  pool.Release(id);
  EXPECT_EQ(pool.num_free(), 1);
}

TEST(BlockPoolDeathTest, DoubleReleaseIsAnInvariantViolation) {
  BlockPool pool(1);
  int32_t id = *pool.Allocate();
  pool.Release(id);
  EXPECT_DEATH(pool.Release(id), "double release");
}

}  // namespace
}  // namespace smallmind::worker
