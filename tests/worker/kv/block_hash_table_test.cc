#include "worker/kv/block_hash_table.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

namespace smallmind::worker {
namespace {

TEST(BlockHashTableTest, FindsWhatWasInsertedAndForgetsWhatWasErased) {
  BlockHashTable table(4);
  EXPECT_EQ(table.Find(11), -1);
  EXPECT_TRUE(table.Insert(11, 0));
  EXPECT_TRUE(table.Insert(22, 1));
  EXPECT_EQ(table.Find(11), 0);
  EXPECT_EQ(table.Find(22), 1);
  EXPECT_TRUE(table.Erase(11));
  EXPECT_FALSE(table.Erase(11));
  EXPECT_EQ(table.Find(11), -1);
  EXPECT_EQ(table.Find(22), 1);
  EXPECT_EQ(table.size(), 1);
}

TEST(BlockHashTableTest, RefusesEntriesBeyondItsCapacity) {
  BlockHashTable table(2);
  EXPECT_TRUE(table.Insert(1, 0));
  EXPECT_TRUE(table.Insert(2, 1));
  EXPECT_FALSE(table.Insert(3, 2));
}

// Random inserts and erases against std::unordered_map: backward-shift deletion must keep every
// remaining entry reachable, including across probe runs that wrap round the end of the table.
TEST(BlockHashTableTest, AgreesWithAReferenceMapUnderRandomInsertsAndErases) {
  constexpr int kMax = 64;
  BlockHashTable table(kMax);
  std::unordered_map<uint64_t, int32_t> ref;
  std::mt19937_64 rng(7);
  for (int step = 0; step < 20000; ++step) {
    // Few distinct keys, so probe runs collide often.
    const uint64_t key = 1 + rng() % 200;
    const bool present = ref.count(key) > 0;
    if (!present && static_cast<int>(ref.size()) < kMax && rng() % 2 == 0) {
      ASSERT_TRUE(table.Insert(key, step));
      ref[key] = step;
    } else if (present) {
      ASSERT_TRUE(table.Erase(key));
      ref.erase(key);
    }
    if (step % 97 == 0) {
      for (uint64_t k = 1; k <= 200; ++k) {
        auto it = ref.find(k);
        ASSERT_EQ(table.Find(k), it == ref.end() ? -1 : it->second) << "step " << step;
      }
    }
  }
  EXPECT_EQ(table.size(), static_cast<int>(ref.size()));
}

}  // namespace
}  // namespace smallmind::worker
