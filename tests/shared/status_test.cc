#include "shared/status.h"

#include <gtest/gtest.h>

namespace smallmind::shared {
namespace {

Result<int> ParsePositive(int v) {
  if (v <= 0) return InvalidArgument("value must be > 0, got " + std::to_string(v));
  return v;
}

Status UseParse(int v, int* out) {
  SM_ASSIGN_OR_RETURN(*out, ParsePositive(v));
  return Status::Ok();
}

TEST(StatusTest, ToStringNamesCodeAndMessage) {
  EXPECT_EQ(InvalidArgument("bad top_p").ToString(), "INVALID_ARGUMENT: bad top_p");
  EXPECT_EQ(Status::Ok().ToString(), "OK");
}

TEST(StatusTest, AssignOrReturnPropagatesErrorAndValue) {
  int out = 0;
  EXPECT_TRUE(UseParse(3, &out).ok());
  EXPECT_EQ(out, 3);
  Status s = UseParse(-1, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "value must be > 0, got -1");
}

TEST(StatusDeathTest, CheckAbortsWithFileAndLine) {
  EXPECT_DEATH(SM_CHECK(1 == 2) << "numbers", "status_test.cc:.*check failed: 1 == 2: numbers");
}

}  // namespace
}  // namespace smallmind::shared
