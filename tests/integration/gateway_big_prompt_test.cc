// Huge prompts and small requests at once (issue 40 item 2): four concurrent 7 MB prompts once
// cost each worker ~6 s of tokenizing before the context check refused them, the gateway's health
// polls timed out meanwhile, both workers were marked down, and 166 of 200 small requests got
// UNAVAILABLE "no healthy worker". Now the huge ones are refused before they are tokenized, the
// worker's request work runs apart from its Stats answers, and a slow poll is not a death: every
// small request sent meanwhile is served.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "tests/testing/rpc/gateway_fixture.h"

namespace smallmind {
namespace {

TEST(GatewayBigPromptTest, FourSevenMegabytePromptsAreRefusedWhileEverySmallRequestIsServed) {
  testing::GatewayOptions options;
  options.workers = 2;
  auto started = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  testing::GatewayFixture& gateway = **started;

  std::string huge;
  huge.reserve(7 << 20);
  while (huge.size() + 12 <= (7u << 20)) huge += "hello world ";

  constexpr int kHuge = 4;
  std::vector<grpc::Status> refused(kHuge);
  std::atomic<int> huge_done{0};
  std::vector<std::thread> senders;
  for (int i = 0; i < kHuge; ++i) {
    senders.emplace_back([&, i] {
      v1::GenerateRequest request;
      request.set_prompt(huge);
      request.mutable_stopping()->set_max_new_tokens(4);
      refused[i] = testing::RunGenerate(gateway.stub(), request).status;
      huge_done.fetch_add(1);
    });
  }
  // Small requests while the huge ones are in flight: at least kMinProbes, and on until the huge
  // ones have all been answered (bounded by kMaxProbes).
  constexpr int kMinProbes = 20, kMaxProbes = 400;
  int probes = 0, served = 0;
  std::string first_failure;
  while (probes < kMaxProbes && (probes < kMinProbes || huge_done.load() < kHuge)) {
    v1::GenerateRequest request;
    request.set_prompt("a small request");
    request.mutable_stopping()->set_max_new_tokens(2);
    const testing::GenerateOutcome outcome = testing::RunGenerate(gateway.stub(), request);
    ++probes;
    if (outcome.status.ok()) {
      ++served;
    } else if (first_failure.empty()) {
      first_failure =
          std::to_string(outcome.status.error_code()) + " " + outcome.status.error_message();
    }
  }
  for (std::thread& t : senders) t.join();

  EXPECT_EQ(served, probes) << "first failure: " << first_failure;
  for (const grpc::Status& s : refused) {
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
    EXPECT_NE(s.error_message().find("bytes, so at least"), std::string::npos) << s.error_message();
  }
}

}  // namespace
}  // namespace smallmind
