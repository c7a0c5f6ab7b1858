#include "shared/rate_limited_log.h"

#include <gtest/gtest.h>

#include <chrono>

namespace smallmind::shared {
namespace {

// An accept loop retried on EMFILE once logged 1.58 M lines in 5 s: one line per interval now.
TEST(RateLimitedLogTest, LogsOneLineAnIntervalAndCountsTheRest) {
  RateLimitedLog log(std::chrono::hours(1));
  EXPECT_TRUE(log.Warn("accept failed: {}", "Too many open files"));
  int logged = 0;
  for (int i = 0; i < 100000; ++i) logged += log.Warn("accept failed: {}", i);
  EXPECT_EQ(logged, 0);
  EXPECT_EQ(log.held_back(), 100000u);
}

TEST(RateLimitedLogTest, AZeroIntervalLogsEveryLine) {
  RateLimitedLog log(std::chrono::nanoseconds(0));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(log.Warn("line {}", i));
  EXPECT_EQ(log.held_back(), 0u);
}

}  // namespace
}  // namespace smallmind::shared
