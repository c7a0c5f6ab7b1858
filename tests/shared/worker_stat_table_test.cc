// The worker stat table's rows follow Prometheus' naming rules (the ones `promtool check metrics`
// enforces) and name each family once.
#include "shared/worker_stat_table.h"

#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

namespace smallmind::shared {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

TEST(WorkerStatTableTest, NamesAreUniqueAndFollowPrometheusSuffixRules) {
  std::set<std::string_view> names;
  for (const WorkerStatDescriptor& d : kWorkerStatTable) {
    EXPECT_TRUE(names.insert(d.name).second) << d.name << " twice";
    EXPECT_TRUE(d.name.starts_with("smallmind_")) << d.name;
    EXPECT_FALSE(d.help.empty()) << d.name;
    EXPECT_FALSE(d.unit.empty()) << d.name;
    // A counter's name ends in _total and only a counter's does.
    EXPECT_EQ(EndsWith(d.name, "_total"), d.kind == StatKind::kCounter) << d.name;
  }
}

TEST(WorkerStatTableTest, ReadsAStatByNameAndZeroWhenAbsent) {
  const std::map<std::string, double> values = {{"smallmind_kv_pages_used", 12}};
  EXPECT_EQ(ReadWorkerStat(values, WorkerStat::kKvPagesUsed), 12);
  EXPECT_EQ(ReadWorkerStat(values, WorkerStat::kKvPagesCapacity), 0);
  EXPECT_EQ(Describe(WorkerStat::kKvPagesCapacity).name, "smallmind_kv_pages_capacity");
}

}  // namespace
}  // namespace smallmind::shared
