#include "shared/fd_limit.h"

#include <sys/resource.h>

#include <gtest/gtest.h>

namespace smallmind::shared {
namespace {

// Under a soft limit of 1024, 1,100 idle HTTP connections once took every descriptor and wedged
// the gRPC listener: the processes now start at their hard limit.
TEST(FdLimitTest, RaisesTheSoftLimitToTheHardOne) {
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  if (saved.rlim_max < 512) GTEST_SKIP() << "hard limit " << saved.rlim_max << " too low to test";
  rlimit low = saved;
  low.rlim_cur = 256;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  Result<FdLimit> raised = RaiseFdLimit();
  rlimit now{};
  ::getrlimit(RLIMIT_NOFILE, &now);
  ::setrlimit(RLIMIT_NOFILE, &saved);
  ASSERT_TRUE(raised.ok()) << raised.status().ToString();
  EXPECT_EQ(raised->before, 256u);
  EXPECT_GT(raised->after, 256u);
  EXPECT_EQ(now.rlim_cur, raised->after);
  EXPECT_LE(now.rlim_cur, saved.rlim_max);
}

}  // namespace
}  // namespace smallmind::shared
