#include "shared/cpu_topology.h"

#include <gtest/gtest.h>

namespace smallmind::shared {
namespace {

TEST(CpuTopologyTest, ParsesRangesAndSinglesSortedUnique) {
  auto cpus = ParseCpuList("6,0-3,2");
  ASSERT_TRUE(cpus.ok()) << cpus.status().ToString();
  EXPECT_EQ(*cpus, (std::vector<int>{0, 1, 2, 3, 6}));
  EXPECT_EQ(FormatCpuList(*cpus), "0-3,6");
}

TEST(CpuTopologyTest, RejectsMalformedListsNamingThePiece) {
  for (const char* bad : {"", "a", "3-1", "1,,2", "-1", "0-99999"}) {
    auto cpus = ParseCpuList(bad);
    EXPECT_FALSE(cpus.ok()) << bad;
  }
  EXPECT_NE(ParseCpuList("0,x").status().message().find("'x'"), std::string::npos);
}

TEST(CpuTopologyTest, PinsToAnAllowedCpu) {
  auto allowed = AllowedCpus();
  ASSERT_FALSE(allowed.empty());
  EXPECT_TRUE(PinCurrentThread({allowed.front()}).ok());
  EXPECT_TRUE(PinCurrentThread(allowed).ok());  // restore
  EXPECT_EQ(NumaNodeOfCpus(allowed), NumaNodeOfCpus({allowed.front()}));
}

}  // namespace
}  // namespace smallmind::shared
