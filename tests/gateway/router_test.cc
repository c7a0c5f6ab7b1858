#include "gateway/router.h"

#include <vector>

#include <gtest/gtest.h>

namespace smallmind::gateway {
namespace {

TEST(RouterTest, PicksTheLeastLoadedHealthyWorker) {
  const std::vector<WorkerLoad> loads = {{true, 3}, {true, 1}, {true, 2}};
  for (uint64_t cursor = 0; cursor < 6; ++cursor) EXPECT_EQ(Route(loads, cursor), 1u);
}

TEST(RouterTest, SkipsUnhealthyWorkersEvenWhenIdle) {
  const std::vector<WorkerLoad> loads = {{false, 0}, {true, 5}, {false, 0}};
  for (uint64_t cursor = 0; cursor < 6; ++cursor) EXPECT_EQ(Route(loads, cursor), 1u);
}

TEST(RouterTest, NoHealthyWorkerGivesNothing) {
  EXPECT_EQ(Route(std::vector<WorkerLoad>{{false, 0}, {false, 0}}, 0), std::nullopt);
  EXPECT_EQ(Route(std::vector<WorkerLoad>{}, 0), std::nullopt);
}

TEST(RouterTest, EqualWorkersTakeTurnsAsTheCursorAdvances) {
  const std::vector<WorkerLoad> loads = {{true, 1}, {true, 1}, {true, 1}};
  std::vector<size_t> picks;
  for (uint64_t cursor = 0; cursor < 6; ++cursor) picks.push_back(*Route(loads, cursor));
  EXPECT_EQ(picks, (std::vector<size_t>{0, 1, 2, 0, 1, 2}));
}

TEST(RouterTest, TiesAmongTheLeastLoadedRotateWhileBusierWorkersWait) {
  const std::vector<WorkerLoad> loads = {{true, 2}, {true, 0}, {true, 2}, {true, 0}};
  std::vector<size_t> picks;
  for (uint64_t cursor = 0; cursor < 4; ++cursor) picks.push_back(*Route(loads, cursor));
  EXPECT_EQ(picks, (std::vector<size_t>{1, 1, 3, 3}));
}

}  // namespace
}  // namespace smallmind::gateway
