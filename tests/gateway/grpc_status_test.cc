#include "shared/grpc_status.h"

#include <gtest/gtest.h>

namespace smallmind::shared {
namespace {

TEST(GrpcStatusTest, EveryProjectCodeSurvivesARoundTripWithItsMessage) {
  const StatusCode codes[] = {
      StatusCode::kCancelled,         StatusCode::kInvalidArgument,
      StatusCode::kNotFound,          StatusCode::kDeadlineExceeded,
      StatusCode::kResourceExhausted, StatusCode::kFailedPrecondition,
      StatusCode::kUnauthenticated,   StatusCode::kUnavailable,
      StatusCode::kInternal,          StatusCode::kUnimplemented,
  };
  for (StatusCode code : codes) {
    const Status back = FromGrpcStatus(ToGrpcStatus(Status(code, "why")));
    EXPECT_EQ(back.code(), code) << StatusCodeName(code);
    EXPECT_EQ(back.message(), "why");
  }
  EXPECT_TRUE(FromGrpcStatus(ToGrpcStatus(Status::Ok())).ok());
}

TEST(GrpcStatusTest, MapsToTheSameNamedGrpcCode) {
  EXPECT_EQ(ToGrpcCode(StatusCode::kInvalidArgument), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(ToGrpcCode(StatusCode::kResourceExhausted), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(ToGrpcCode(StatusCode::kUnauthenticated), grpc::StatusCode::UNAUTHENTICATED);
}

TEST(GrpcStatusTest, CodesTheProjectDoesNotUseBecomeInternal) {
  const Status s = FromGrpcStatus(grpc::Status(grpc::StatusCode::DATA_LOSS, "disk"));
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_EQ(s.message(), "disk");
}

}  // namespace
}  // namespace smallmind::shared
