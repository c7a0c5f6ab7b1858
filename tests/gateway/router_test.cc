#include "gateway/workers/router.h"

#include <vector>

#include <gtest/gtest.h>

namespace smallmind::gateway {
namespace {

// A healthy worker with `tokens` outstanding (and as many requests in flight as thousands of
// tokens, rounded up), matching `match` bytes of the prompt.
WorkerLoad Load(uint64_t tokens, uint32_t match = 0, bool healthy = true) {
  WorkerLoad w;
  w.healthy = healthy;
  w.outstanding_tokens = tokens;
  w.in_flight = static_cast<uint32_t>((tokens + 999) / 1000);
  w.prefix_match_bytes = match;
  return w;
}

size_t Pick(const std::vector<WorkerLoad>& loads, uint64_t cursor, RouteOptions options = {}) {
  const auto decision = Route(loads, cursor, options);
  EXPECT_TRUE(decision.has_value());
  return decision ? decision->worker : 99;
}

TEST(RouterTest, PicksTheWorkerWithTheFewestOutstandingTokens) {
  const std::vector<WorkerLoad> loads = {Load(3000), Load(1000), Load(2000)};
  for (uint64_t cursor = 0; cursor < 6; ++cursor) EXPECT_EQ(Pick(loads, cursor), 1u);
}

TEST(RouterTest, EqualTokensGoToFewerRequestsThenLowerKvUse) {
  std::vector<WorkerLoad> loads = {Load(1000), Load(1000), Load(1000)};
  loads[0].in_flight = 2;
  loads[1].kv_used = 0.5;
  loads[2].kv_used = 0.25;
  for (uint64_t cursor = 0; cursor < 6; ++cursor) EXPECT_EQ(Pick(loads, cursor), 2u);
}

TEST(RouterTest, SkipsUnhealthyWorkersEvenWhenIdle) {
  const std::vector<WorkerLoad> loads = {Load(0, 0, false), Load(5000), Load(0, 1024, false)};
  for (uint64_t cursor = 0; cursor < 6; ++cursor) EXPECT_EQ(Pick(loads, cursor), 1u);
}

TEST(RouterTest, NoHealthyWorkerGivesNothing) {
  EXPECT_EQ(Route(std::vector<WorkerLoad>{Load(0, 0, false), Load(0, 0, false)}, 0), std::nullopt);
  EXPECT_EQ(Route(std::vector<WorkerLoad>{}, 0), std::nullopt);
}

TEST(RouterTest, EqualWorkersTakeTurnsAsTheCursorAdvances) {
  const std::vector<WorkerLoad> loads = {Load(1000), Load(1000), Load(1000)};
  std::vector<size_t> picks;
  for (uint64_t cursor = 0; cursor < 6; ++cursor) picks.push_back(Pick(loads, cursor));
  EXPECT_EQ(picks, (std::vector<size_t>{0, 1, 2, 0, 1, 2}));
}

TEST(RouterTest, TiesAmongTheLeastLoadedRotateWhileBusierWorkersWait) {
  const std::vector<WorkerLoad> loads = {Load(2000), Load(0), Load(2000), Load(0)};
  std::vector<size_t> picks;
  for (uint64_t cursor = 0; cursor < 4; ++cursor) picks.push_back(Pick(loads, cursor));
  EXPECT_EQ(picks, (std::vector<size_t>{1, 1, 3, 3}));
}

TEST(RouterTest, SamePrefixGoesToTheWorkerHoldingItWhenNotMuchBusier) {
  // Worker 0 holds the prompt's first 1024 bytes and has 1500 more tokens outstanding.
  const std::vector<WorkerLoad> loads = {Load(2000, 1024), Load(500)};
  for (uint64_t cursor = 0; cursor < 4; ++cursor) {
    const auto decision = Route(loads, cursor, {});
    ASSERT_TRUE(decision.has_value());
    EXPECT_EQ(decision->worker, 0u);
    EXPECT_TRUE(decision->by_affinity);
  }
}

TEST(RouterTest, MuchBusierPrefixHolderFallsBackToTheLeastLoaded) {
  RouteOptions options;
  options.affinity_threshold_tokens = 2048;
  const std::vector<WorkerLoad> at_threshold = {Load(2548, 1024), Load(500)};
  EXPECT_EQ(Pick(at_threshold, 0, options), 0u);
  const std::vector<WorkerLoad> beyond = {Load(2549, 1024), Load(500)};
  const auto decision = Route(beyond, 0, options);
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(decision->worker, 1u);
  EXPECT_FALSE(decision->by_affinity);
}

TEST(RouterTest, LongestPrefixMatchWinsAndEqualMatchesGoToTheLessLoaded) {
  const std::vector<WorkerLoad> longest = {Load(300, 256), Load(900, 1024), Load(0)};
  EXPECT_EQ(Pick(longest, 0), 1u);
  const std::vector<WorkerLoad> equal = {Load(900, 1024), Load(300, 1024), Load(0)};
  for (uint64_t cursor = 0; cursor < 3; ++cursor) EXPECT_EQ(Pick(equal, cursor), 1u);
}

TEST(RouterTest, AffinityOffIsPlainLeastLoaded) {
  RouteOptions off;
  off.prefix_affinity = false;
  const std::vector<WorkerLoad> loads = {Load(600, 1024), Load(500)};
  const auto decision = Route(loads, 0, off);
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(decision->worker, 1u);
  EXPECT_FALSE(decision->by_affinity);
}

}  // namespace
}  // namespace smallmind::gateway
