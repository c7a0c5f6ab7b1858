#include "gateway/models/residency_policy.h"

#include <chrono>
#include <vector>

#include <gtest/gtest.h>

namespace smallmind::gateway {
namespace {

using Verdict = EvictionPlan::Verdict;

ResidentModel Model(size_t index, uint64_t bytes, int last_used_s, bool busy = false) {
  ResidentModel m;
  m.index = index;
  m.bytes = bytes;
  m.busy = busy;
  m.last_used = std::chrono::steady_clock::time_point{} + std::chrono::seconds(last_used_s);
  return m;
}

TEST(ResidencyPolicyTest, NoBudgetAlwaysFitsWithoutEvictions) {
  const std::vector<ResidentModel> resident = {Model(0, 1000, 1), Model(1, 1000, 2)};
  const EvictionPlan plan = PlanEvictions(0, 5000, resident);
  EXPECT_EQ(plan.verdict, Verdict::kFits);
  EXPECT_TRUE(plan.victims.empty());
}

TEST(ResidencyPolicyTest, FitsAsItIsWhenTheBudgetHoldsEverything) {
  const std::vector<ResidentModel> resident = {Model(0, 100, 1)};
  const EvictionPlan plan = PlanEvictions(300, 200, resident);
  EXPECT_EQ(plan.verdict, Verdict::kFits);
  EXPECT_TRUE(plan.victims.empty());
}

TEST(ResidencyPolicyTest, UnloadsLeastRecentlyUsedIdleModelsFirstUntilItFits) {
  // 0 was used last at t=5, 1 at t=1 (the oldest), 2 at t=3; each 100 bytes, budget 300.
  const std::vector<ResidentModel> resident = {Model(0, 100, 5), Model(1, 100, 1),
                                               Model(2, 100, 3)};
  EvictionPlan plan = PlanEvictions(300, 100, resident);
  EXPECT_EQ(plan.verdict, Verdict::kFits);
  EXPECT_EQ(plan.victims, (std::vector<size_t>{1}));
  plan = PlanEvictions(300, 250, resident);
  EXPECT_EQ(plan.verdict, Verdict::kFits);
  EXPECT_EQ(plan.victims, (std::vector<size_t>{1, 2, 0}));
}

TEST(ResidencyPolicyTest, BusyModelsStayAndMakeItWait) {
  const std::vector<ResidentModel> resident = {Model(0, 100, 1, /*busy=*/true), Model(1, 100, 2)};
  EvictionPlan plan = PlanEvictions(200, 100, resident);
  EXPECT_EQ(plan.verdict, Verdict::kFits);
  EXPECT_EQ(plan.victims, (std::vector<size_t>{1}));  // the older one is busy: the next goes
  plan = PlanEvictions(200, 150, resident);
  EXPECT_EQ(plan.verdict, Verdict::kWait);
  EXPECT_TRUE(plan.victims.empty());
}

TEST(ResidencyPolicyTest, AModelLargerThanTheBudgetNeverFits) {
  const EvictionPlan plan = PlanEvictions(100, 101, {});
  EXPECT_EQ(plan.verdict, Verdict::kTooLarge);
}

TEST(ResidencyPolicyTest, TiesGoByIndex) {
  const std::vector<ResidentModel> resident = {Model(3, 100, 1), Model(1, 100, 1)};
  const EvictionPlan plan = PlanEvictions(150, 100, resident);
  EXPECT_EQ(plan.victims, (std::vector<size_t>{1, 3}));
}

}  // namespace
}  // namespace smallmind::gateway
