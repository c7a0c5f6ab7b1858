// What the client prints for a failed call: the code and the server's message, and for an
// UNIMPLEMENTED with no message (a server without the Inference service, such as a worker given
// as --addr) where to point instead.
#include "cli/client.h"

#include <gtest/gtest.h>

#include <string>

namespace smallmind::cli {
namespace {

TEST(ClientTest, AnRpcErrorIsItsCodeAndMessage) {
  EXPECT_EQ(DescribeRpcError(grpc::Status(grpc::StatusCode::UNAVAILABLE, "worker died")),
            "UNAVAILABLE: worker died");
  EXPECT_EQ(DescribeRpcError(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "no such method")),
            "UNIMPLEMENTED: no such method");
}

TEST(ClientTest, AServerWithoutTheInferenceServiceIsNamedWithTheFix) {
  const std::string m = DescribeRpcError(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, ""));
  EXPECT_EQ(m.rfind("UNIMPLEMENTED: ", 0), 0u) << m;
  EXPECT_NE(m.find("no smallmind.v1.Inference service"), std::string::npos) << m;
  EXPECT_NE(m.find("--addr at the gateway"), std::string::npos) << m;
}

}  // namespace
}  // namespace smallmind::cli
