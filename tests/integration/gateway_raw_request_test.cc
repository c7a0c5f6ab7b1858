// Generate on bytes that are no GenerateRequest (issue 40): INVALID_ARGUMENT with a message that
// says so, where gRPC's own parsing answered a bare status with an empty message.
#include <chrono>
#include <future>
#include <memory>
#include <string>

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "tests/testing/rpc/gateway_fixture.h"

namespace smallmind {
namespace {

// One message of raw `bytes` to Generate, as a client with a broken encoder would send it.
grpc::Status SendRaw(const std::shared_ptr<grpc::Channel>& channel, const std::string& bytes) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  const grpc::Slice slice(bytes);
  const grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, "/smallmind.v1.Inference/Generate", grpc::StubOptions(), &request,
                 &response, [&done](grpc::Status s) { done.set_value(std::move(s)); });
  return done.get_future().get();
}

TEST(GatewayRawRequestTest, BytesThatAreNoGenerateRequestGetInvalidArgumentSayingSo) {
  auto started = testing::GatewayFixture::Start({});
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  testing::GatewayFixture& gateway = **started;
  // Field 1 (request_id, length-delimited) with a length varint that never ends; a truncated
  // string; a group end tag with no start.
  const std::string bad[] = {std::string("\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 11),
                             std::string("\x0a\x10"
                                         "abc",
                                         5),
                             std::string("\x0c", 1)};
  for (const std::string& bytes : bad) {
    const grpc::Status s = SendRaw(gateway.channel(), bytes);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
    EXPECT_NE(s.error_message().find("not a valid smallmind.v1.GenerateRequest"), std::string::npos)
        << s.error_message();
  }
  // A well-formed request on the same port still streams.
  v1::GenerateRequest request;
  request.set_prompt("hello");
  request.mutable_stopping()->set_max_new_tokens(4);
  const testing::GenerateOutcome ok = testing::RunGenerate(gateway.stub(), request);
  EXPECT_TRUE(ok.status.ok()) << ok.status.error_message();
  ASSERT_NE(ok.last(), nullptr);
  EXPECT_GT(ok.last()->usage().completion_tokens(), 0u);
}

}  // namespace
}  // namespace smallmind
