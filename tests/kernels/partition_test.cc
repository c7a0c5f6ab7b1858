#include "kernels/partition.h"

#include <gtest/gtest.h>

namespace smallmind::kernels {
namespace {

TEST(PartitionTest, StaticRowsCoversEveryRowOnceInOrder) {
  for (int n_rows : {0, 1, 7, 64, 100}) {
    for (int n_parts : {1, 2, 3, 8, 13}) {
      int next = 0;
      for (int part = 0; part < n_parts; part++) {
        const RowRange r = StaticRows(n_rows, n_parts, part);
        EXPECT_EQ(r.begin, next) << n_rows << " rows, " << n_parts << " parts, part " << part;
        EXPECT_GE(r.size(), n_rows / n_parts);
        EXPECT_LE(r.size(), n_rows / n_parts + 1);
        next = r.end;
      }
      EXPECT_EQ(next, n_rows);
    }
  }
}

TEST(PartitionTest, StaticRowsGivesTheRemainderToTheFirstParts) {
  EXPECT_EQ(StaticRows(10, 3, 0).size(), 4);
  EXPECT_EQ(StaticRows(10, 3, 1).size(), 3);
  EXPECT_EQ(StaticRows(10, 3, 2).begin, 7);
  EXPECT_TRUE(StaticRows(2, 4, 3).empty());
}

}  // namespace
}  // namespace smallmind::kernels
