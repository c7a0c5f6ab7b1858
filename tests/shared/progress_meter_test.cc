// ProgressMeter: a running percentage at most once per interval, never a repeat, never 100%.
#include "shared/progress_meter.h"

#include <gtest/gtest.h>

namespace smallmind::shared {
namespace {

using Clock = ProgressMeter::Clock;
using std::chrono::seconds;

TEST(ProgressMeterTest, ReportsAtMostOncePerIntervalWhenThePercentMoved) {
  const Clock::time_point t0{};
  ProgressMeter meter(1000, seconds(2), t0);
  EXPECT_EQ(meter.Update(100, t0 + seconds(1)), std::nullopt) << "sooner than the interval";
  EXPECT_EQ(meter.Update(250, t0 + seconds(2)), 25);
  EXPECT_EQ(meter.Update(300, t0 + seconds(3)), std::nullopt) << "one second after the last";
  EXPECT_EQ(meter.Update(309, t0 + seconds(4)), 30);
  EXPECT_EQ(meter.Update(309, t0 + seconds(9)), std::nullopt) << "the same percent again";
  EXPECT_EQ(meter.Update(999, t0 + seconds(12)), 99);
  EXPECT_EQ(meter.Update(1000, t0 + seconds(20)), std::nullopt) << "done: its own line says so";
}

TEST(ProgressMeterTest, NothingToMeasureSaysNothing) {
  ProgressMeter meter(0, seconds(1), Clock::time_point{});
  EXPECT_EQ(meter.Update(0, Clock::time_point{} + seconds(5)), std::nullopt);
}

}  // namespace
}  // namespace smallmind::shared
