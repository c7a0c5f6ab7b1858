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

// A request over the worker's message limit once came back to HTTP clients as 429 queue_full
// (retry!) and was retried on every other worker first.
TEST(GrpcStatusTest, AMessageOverTheSizeLimitIsTheCallersErrorNotAFullQueue) {
  const Status s = FromGrpcStatus(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                                               "Received message larger than max (70000000 vs. "
                                               "67108864)"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "the request is too large for its next hop: Received message larger than max "
            "(70000000 vs. 67108864)");
  EXPECT_EQ(FromGrpcStatus(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "queue full")).code(),
            StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace smallmind::shared
