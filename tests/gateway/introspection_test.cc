// grpcurl and ghz need server reflection and grpc.health.v1 on the public port. These are called
// here through a GenericStub with hand-encoded messages, as the reflection client is not installed
// (the ghz recipe of README.md and docs/benchmarks.md relies on the descriptors checked here).
#include <stdlib.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/unknown_field_set.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "gateway/gateway.h"
#include "tests/gateway/fake_worker.h"
#include "tests/testing/scoped_temp_dir.h"

namespace smallmind::gateway {
namespace {

using google::protobuf::UnknownField;
using google::protobuf::UnknownFieldSet;

constexpr std::chrono::milliseconds kWait{10000};

grpc::ByteBuffer ToBuffer(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

std::string FromBuffer(const grpc::ByteBuffer& buffer) {
  grpc::Slice slice;
  if (!buffer.DumpToSingleSlice(&slice).ok()) return "";
  return std::string(reinterpret_cast<const char*>(slice.begin()), slice.size());
}

// Every field `number` of `fields` (wire type length-delimited).
std::vector<std::string> Strings(const UnknownFieldSet& fields, int number) {
  std::vector<std::string> out;
  for (int i = 0; i < fields.field_count(); ++i) {
    const UnknownField& f = fields.field(i);
    if (f.number() == number && f.type() == UnknownField::TYPE_LENGTH_DELIMITED) {
      out.push_back(f.length_delimited());
    }
  }
  return out;
}

// One request, one response on a bidi stream, then done.
class OneShotBidi final : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  OneShotBidi(grpc::GenericStub& stub, const std::string& method, const std::string& request)
      : request_(ToBuffer(request)) {
    stub.PrepareBidiStreamingCall(&context_, method, grpc::StubOptions(), this);
    StartWriteLast(&request_, grpc::WriteOptions());
    StartRead(&response_);
    StartCall();
  }
  void OnReadDone(bool ok) override {
    if (ok) bytes_ = FromBuffer(response_);
  }
  void OnDone(const grpc::Status& status) override {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = status;
    done_ = true;
    cv_.notify_all();
  }
  // The response bytes once the call ended OK; nullopt otherwise.
  std::optional<std::string> Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, kWait, [this] { return done_; }) || !status_.ok()) return std::nullopt;
    return bytes_;
  }

 private:
  grpc::ClientContext context_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
  std::string bytes_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  grpc::Status status_;
};

class IntrospectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tmp_.path();
    worker_ = std::make_unique<testing::FakeWorker>(0, dir_ + "/w0.sock");
    ASSERT_TRUE(worker_->started());
    GatewayConfig config;
    config.worker_endpoints = {worker_->target()};
    config.listen_host = "127.0.0.1";
    config.port = 0;
    gateway_ = std::make_unique<Gateway>(config);
    const shared::Status status = gateway_->Start();
    ASSERT_TRUE(status.ok()) << status.ToString();
    stub_ = std::make_unique<grpc::GenericStub>(
        grpc::CreateChannel(gateway_->connect_address(), grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    if (gateway_) gateway_->Shutdown();
    if (worker_) worker_->Shutdown();
  }

  smallmind::testing::ScopedTempDir tmp_;
  std::string dir_;
  std::unique_ptr<testing::FakeWorker> worker_;
  std::unique_ptr<Gateway> gateway_;
  std::unique_ptr<grpc::GenericStub> stub_;
};

TEST_F(IntrospectionTest, ReflectionListsTheInferenceService) {
  // ServerReflectionRequest { list_services (field 7) = "" }.
  UnknownFieldSet request;
  request.AddLengthDelimited(7, "");
  std::string request_bytes;
  ASSERT_TRUE(request.SerializeToString(&request_bytes));
  OneShotBidi call(*stub_, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
                   request_bytes);
  const std::optional<std::string> response_bytes = call.Wait();
  ASSERT_TRUE(response_bytes.has_value());
  // ServerReflectionResponse.list_services_response (6) -> ListServiceResponse.service (1) ->
  // ServiceResponse.name (1).
  UnknownFieldSet response;
  ASSERT_TRUE(response.ParseFromString(*response_bytes));
  const auto lists = Strings(response, 6);
  ASSERT_EQ(lists.size(), 1u);
  UnknownFieldSet list;
  ASSERT_TRUE(list.ParseFromString(lists[0]));
  std::vector<std::string> names;
  for (const std::string& service : Strings(list, 1)) {
    UnknownFieldSet entry;
    ASSERT_TRUE(entry.ParseFromString(service));
    for (const std::string& name : Strings(entry, 1)) names.push_back(name);
  }
  EXPECT_NE(std::find(names.begin(), names.end(), "smallmind.v1.Inference"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "grpc.health.v1.Health"), names.end());
}

// What ghz (and grpcurl) ask before the first call, with no .proto at hand:
// ServerReflectionRequest { file_containing_symbol (4) = "smallmind.v1.Inference" } answers
// file_descriptor_response (4) -> FileDescriptorResponse.file_descriptor_proto (1, repeated): the
// file and every file it imports, enough to build the request and response messages.
TEST_F(IntrospectionTest, ReflectionServesTheDescriptorsGhzAsksForBySymbol) {
  UnknownFieldSet request;
  request.AddLengthDelimited(4, "smallmind.v1.Inference");
  std::string request_bytes;
  ASSERT_TRUE(request.SerializeToString(&request_bytes));
  OneShotBidi call(*stub_, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
                   request_bytes);
  const std::optional<std::string> response_bytes = call.Wait();
  ASSERT_TRUE(response_bytes.has_value());
  UnknownFieldSet response;
  ASSERT_TRUE(response.ParseFromString(*response_bytes));
  EXPECT_TRUE(Strings(response, 7).empty()) << "an error_response (7)";
  const auto descriptor_responses = Strings(response, 4);
  ASSERT_EQ(descriptor_responses.size(), 1u);
  UnknownFieldSet files;
  ASSERT_TRUE(files.ParseFromString(descriptor_responses[0]));
  // Build a pool from exactly what was served, dependencies first, as the client does.
  std::map<std::string, google::protobuf::FileDescriptorProto> served;
  for (const std::string& bytes : Strings(files, 1)) {
    google::protobuf::FileDescriptorProto file;
    ASSERT_TRUE(file.ParseFromString(bytes));
    served[file.name()] = file;
  }
  ASSERT_TRUE(served.count("smallmind/v1/inference.proto"));
  google::protobuf::DescriptorPool pool;
  std::function<bool(const std::string&)> add = [&](const std::string& name) {
    if (pool.FindFileByName(name)) return true;
    auto it = served.find(name);
    if (it == served.end()) return false;
    for (const std::string& dependency : it->second.dependency()) {
      if (!add(dependency)) return false;
    }
    return pool.BuildFile(it->second) != nullptr;
  };
  ASSERT_TRUE(add("smallmind/v1/inference.proto")) << "an import was not served";
  const google::protobuf::MethodDescriptor* generate =
      pool.FindMethodByName("smallmind.v1.Inference.Generate");
  ASSERT_NE(generate, nullptr);
  EXPECT_TRUE(generate->server_streaming());
  EXPECT_FALSE(generate->client_streaming());
  EXPECT_EQ(generate->input_type()->full_name(), "smallmind.v1.GenerateRequest");
  EXPECT_NE(generate->input_type()->FindFieldByName("prompt"), nullptr);
  EXPECT_NE(generate->output_type()->FindFieldByName("token_ids"), nullptr);
}

TEST_F(IntrospectionTest, HealthCheckAnswersServing) {
  for (const std::string service : {"", "smallmind.v1.Inference"}) {
    // HealthCheckRequest { service (1) }.
    UnknownFieldSet request;
    if (!service.empty()) request.AddLengthDelimited(1, service);
    std::string request_bytes;
    ASSERT_TRUE(request.SerializeToString(&request_bytes));
    const grpc::ByteBuffer request_buffer = ToBuffer(request_bytes);
    grpc::ByteBuffer response_buffer;
    grpc::ClientContext context;
    std::mutex mu;
    std::condition_variable cv;
    std::optional<grpc::Status> status;
    stub_->UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request_buffer,
                     &response_buffer, [&](grpc::Status s) {
                       std::lock_guard<std::mutex> lock(mu);
                       status = s;
                       cv.notify_all();
                     });
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, kWait, [&] { return status.has_value(); }));
    ASSERT_TRUE(status->ok()) << service << ": " << status->error_message();
    // HealthCheckResponse { status (1) = SERVING (1) }.
    UnknownFieldSet response;
    ASSERT_TRUE(response.ParseFromString(FromBuffer(response_buffer)));
    ASSERT_EQ(response.field_count(), 1);
    EXPECT_EQ(response.field(0).number(), 1);
    EXPECT_EQ(response.field(0).varint(), 1u) << "service '" << service << "' is not SERVING";
  }
}

}  // namespace
}  // namespace smallmind::gateway
