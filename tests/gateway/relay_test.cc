// The gateway in process, attached through --worker-endpoints to fake workers on Unix sockets,
// driven by a real gRPC client: streaming relay, cancel, error relay, retry, auth, forwards,
// shutdown.
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "gateway/gateway.h"
#include "smallmind/v1/inference.grpc.pb.h"
#include "tests/gateway/fake_worker.h"
#include "tests/testing/scoped_temp_dir.h"

namespace smallmind::gateway {
namespace {

using smallmind::v1::GenerateRequest;
using smallmind::v1::GenerateResponse;
using testing::FakeWorker;

constexpr std::chrono::milliseconds kWait{
    10000};  // bound on every wait; never reached when passing

struct StreamResult {
  std::vector<GenerateResponse> messages;
  grpc::Status status;
};

class RelayTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = tmp_.path(); }
  void TearDown() override {
    if (gateway_) gateway_->Shutdown();
    for (auto& w : workers_) w->Shutdown();
  }

  // Starts the fakes (one per entry: std::nullopt = healthy, else the code every Submit fails
  // with) and a gateway attached to them on a free loopback port.
  void StartGateway(std::vector<std::optional<grpc::StatusCode>> fakes,
                    std::vector<std::string> api_keys = {}, size_t outbox = 8) {
    GatewayConfig config;
    for (size_t i = 0; i < fakes.size(); ++i) {
      workers_.push_back(std::make_unique<FakeWorker>(
          static_cast<uint32_t>(i), dir_ + "/w" + std::to_string(i) + ".sock", fakes[i]));
      ASSERT_TRUE(workers_.back()->started());
      config.worker_endpoints.push_back(workers_.back()->target());
    }
    config.listen_host = "127.0.0.1";
    config.port = 0;
    config.api_keys = std::move(api_keys);
    config.relay.outbox_capacity = outbox;
    config.drain_timeout = std::chrono::milliseconds(200);
    gateway_ = std::make_unique<Gateway>(config);
    const shared::Status status = gateway_->Start();
    ASSERT_TRUE(status.ok()) << status.ToString();
    channel_ = grpc::CreateChannel(gateway_->connect_address(), grpc::InsecureChannelCredentials());
    stub_ = smallmind::v1::Inference::NewStub(channel_);
  }

  StreamResult Generate(const GenerateRequest& request, const std::string& api_key = "") {
    grpc::ClientContext context;
    if (!api_key.empty()) context.AddMetadata("authorization", "Bearer " + api_key);
    context.set_deadline(std::chrono::system_clock::now() + kWait);
    StreamResult result;
    auto reader = stub_->Generate(&context, request);
    GenerateResponse message;
    while (reader->Read(&message)) result.messages.push_back(message);
    result.status = reader->Finish();
    return result;
  }

  static GenerateRequest Prompt(const std::string& prompt, uint32_t max_new_tokens = 0) {
    GenerateRequest request;
    request.set_prompt(prompt);
    request.mutable_stopping()->set_max_new_tokens(max_new_tokens);
    return request;
  }

  smallmind::testing::ScopedTempDir tmp_;
  std::string dir_;
  std::vector<std::unique_ptr<FakeWorker>> workers_;
  std::unique_ptr<Gateway> gateway_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<smallmind::v1::Inference::Stub> stub_;
};

TEST_F(RelayTest, StreamsWorkerMessagesInOrderAndEchoesRequestId) {
  StartGateway({std::nullopt});
  GenerateRequest request = Prompt("hello", 5);
  request.set_request_id("req-42");
  const StreamResult result = Generate(request);
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  ASSERT_EQ(result.messages.size(), 5u);
  for (size_t i = 0; i < result.messages.size(); ++i) {
    EXPECT_EQ(result.messages[i].request_id(), "req-42");
    ASSERT_EQ(result.messages[i].token_ids_size(), 1);
    EXPECT_EQ(result.messages[i].token_ids(0), i + 1);
    EXPECT_EQ(result.messages[i].text(), "t" + std::to_string(i + 1) + " ");
  }
  const GenerateResponse& last = result.messages.back();
  EXPECT_EQ(last.finish_reason(), smallmind::v1::LENGTH);
  EXPECT_EQ(last.timings().worker_id(), 0u);
  EXPECT_GT(last.timings().ttft_ms(), 0.0);
  EXPECT_EQ(last.usage().completion_tokens(), 5u);
}

TEST_F(RelayTest, WorkerReceivesRequestWithDefaultsFilledAndAGeneratedId) {
  StartGateway({std::nullopt});
  const StreamResult result = Generate(Prompt("hello"));
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  const GenerateRequest seen = workers_[0]->last_submit().request();
  EXPECT_FALSE(seen.request_id().empty());
  EXPECT_EQ(seen.sampling().temperature(), 1.0f);
  EXPECT_EQ(seen.sampling().top_p(), 1.0f);
  EXPECT_EQ(seen.stopping().max_new_tokens(), 0u) << "the default is the worker's to resolve";
  ASSERT_EQ(result.messages.size(), 256u);
  EXPECT_EQ(result.messages.front().request_id(), seen.request_id());
}

TEST_F(RelayTest, OutboxOfOneStillDeliversEveryMessageInOrder) {
  StartGateway({std::nullopt}, {}, /*outbox=*/1);
  const StreamResult result = Generate(Prompt("hello", 200));
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  ASSERT_EQ(result.messages.size(), 200u);
  for (size_t i = 0; i < result.messages.size(); ++i) {
    EXPECT_EQ(result.messages[i].token_ids(0), i + 1);
  }
}

TEST_F(RelayTest, ConcurrentStreamsAllCompleteOverTwoWorkers) {
  StartGateway({std::nullopt, std::nullopt});
  constexpr int kStreams = 16;
  std::vector<StreamResult> results(kStreams);
  std::vector<std::thread> clients;
  for (int i = 0; i < kStreams; ++i) {
    clients.emplace_back([&, i] { results[i] = Generate(Prompt("hello", 20 + i)); });
  }
  for (auto& t : clients) t.join();
  for (int i = 0; i < kStreams; ++i) {
    ASSERT_TRUE(results[i].status.ok()) << results[i].status.error_message();
    EXPECT_EQ(results[i].messages.size(), static_cast<size_t>(20 + i));
  }
  EXPECT_EQ(workers_[0]->submits() + workers_[1]->submits(), kStreams);
  EXPECT_GT(workers_[0]->submits(), 0);
  EXPECT_GT(workers_[1]->submits(), 0);
}

TEST_F(RelayTest, ClientCancelReachesTheWorker) {
  StartGateway({std::nullopt});
  grpc::ClientContext context;
  auto reader = stub_->Generate(&context, Prompt("block"));
  ASSERT_TRUE(workers_[0]->WaitForSubmits(1, kWait));
  context.TryCancel();
  EXPECT_TRUE(workers_[0]->WaitForCancels(1, kWait));
  GenerateResponse message;
  EXPECT_FALSE(reader->Read(&message));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
}

TEST_F(RelayTest, RelaysWorkerInvalidArgumentWithItsMessage) {
  StartGateway({std::nullopt});
  const StreamResult result = Generate(Prompt("invalid", 4));
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(result.status.error_message(), testing::kInvalidMessage);
  EXPECT_TRUE(result.messages.empty());
}

TEST_F(RelayTest, RejectsBadFieldsWithoutTouchingTheWorker) {
  StartGateway({std::nullopt});
  GenerateRequest request = Prompt("hello", 4);
  request.mutable_sampling()->set_temperature(500);
  const StreamResult result = Generate(request);
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(result.status.error_message().find("sampling.temperature"), std::string::npos);
  EXPECT_NE(result.status.error_message().find("[0, 100]"), std::string::npos);
  EXPECT_EQ(workers_[0]->submits(), 0);  // token ids vs the vocabulary: the worker checks them
}

TEST_F(RelayTest, WorkerFailureAfterTokensBecomesUnavailable) {
  StartGateway({std::nullopt});
  const StreamResult result = Generate(Prompt("fail-after-2", 8));
  EXPECT_EQ(result.messages.size(), 2u);
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_NE(result.status.error_message().find("engine fault"), std::string::npos);
}

TEST_F(RelayTest, RetriesOnAnotherWorkerWhenOneIsUnavailableBeforeTheFirstToken) {
  StartGateway({grpc::StatusCode::UNAVAILABLE, std::nullopt});
  // Round robin sends one of the two requests to the failing worker first.
  for (int i = 0; i < 2; ++i) {
    const StreamResult result = Generate(Prompt("hello", 3));
    ASSERT_TRUE(result.status.ok()) << result.status.error_message();
    ASSERT_EQ(result.messages.size(), 3u);
    EXPECT_EQ(result.messages.back().timings().worker_id(), 1u);
  }
  EXPECT_EQ(workers_[1]->submits(), 2);
}

TEST_F(RelayTest, ResourceExhaustedFromTheOnlyWorkerIsRelayed) {
  StartGateway({grpc::StatusCode::RESOURCE_EXHAUSTED});
  const StreamResult result = Generate(Prompt("hello", 3));
  EXPECT_EQ(result.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(result.status.error_message(), "fake worker refuses");
}

TEST_F(RelayTest, ApiKeysAreRequiredWhenConfigured) {
  StartGateway({std::nullopt}, {"k1", "k2"});
  EXPECT_EQ(Generate(Prompt("hello", 2)).status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Generate(Prompt("hello", 2), "wrong").status.error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(Generate(Prompt("hello", 2), "k2").status.ok());
  grpc::ClientContext context;
  smallmind::v1::ModelInfo info;
  EXPECT_EQ(stub_->GetModelInfo(&context, {}, &info).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(workers_[0]->submits(), 1);
}

TEST_F(RelayTest, TokenizeAndGetModelInfoAreForwardedToAWorker) {
  StartGateway({std::nullopt, std::nullopt});
  grpc::ClientContext info_context;
  smallmind::v1::ModelInfo info;
  ASSERT_TRUE(stub_->GetModelInfo(&info_context, {}, &info).ok());
  EXPECT_EQ(info.vocab_size(), testing::kFakeVocab);
  EXPECT_EQ(info.context_length(), testing::kFakeContext);
  EXPECT_EQ(info.workers(), 2u);
  grpc::ClientContext tok_context;
  smallmind::v1::TokenizeRequest request;
  request.set_text("AB");
  smallmind::v1::TokenizeResponse response;
  ASSERT_TRUE(stub_->Tokenize(&tok_context, request, &response).ok());
  EXPECT_EQ(std::vector<uint32_t>(response.token_ids().begin(), response.token_ids().end()),
            (std::vector<uint32_t>{'A', 'B'}));
}

TEST_F(RelayTest, ShutdownCancelsStreamsLeftAfterTheDrainTimeout) {
  StartGateway({std::nullopt});
  grpc::ClientContext context;
  auto reader = stub_->Generate(&context, Prompt("block"));
  ASSERT_TRUE(workers_[0]->WaitForSubmits(1, kWait));
  gateway_->Shutdown();
  EXPECT_TRUE(workers_[0]->WaitForCancels(1, kWait));
  GenerateResponse message;
  EXPECT_FALSE(reader->Read(&message));
  EXPECT_FALSE(reader->Finish().ok());
}

}  // namespace
}  // namespace smallmind::gateway
