// Cancelling an Embed call stops its work (issue 45): a real gateway on the shipped stories260K
// (one worker), an Embed of many long token-id inputs (last-token pooling) that the client
// cancels once the worker runs it. The gateway cancels its worker call, the worker's EmbedReactor
// cancels every sequence of the call: the worker is idle again with its KV pages free long before
// it could have embedded them all (its prefill counter stops short of the inputs' tokens), and it
// serves the next Embed. Bounded polls only; no wall-clock assertion.
#include <chrono>
#include <memory>
#include <optional>
#include <thread>

#include <gtest/gtest.h>

#include "shared/worker_stat_table.h"
#include "tests/testing/rpc/gateway_fixture.h"

namespace smallmind {
namespace {

using shared::WorkerStat;

constexpr int kInputs = 512;
constexpr int kTokensPerInput = 480;  // stories260K's context is 512

double Stat(const v1::WorkerStats& stats, WorkerStat s) {
  return shared::ReadWorkerStat(stats.values(), s);
}

v1::EmbedRequest LongInputs(int inputs, int tokens) {
  v1::EmbedRequest request;
  request.set_pooling(v1::POOLING_LAST);
  for (int i = 0; i < inputs; ++i) {
    auto* ids = request.add_inputs()->mutable_token_ids();
    for (int t = 0; t < tokens; ++t) ids->add_ids(static_cast<uint32_t>(1 + (i * 7 + t) % 500));
  }
  return request;
}

TEST(GatewayEmbedCancelTest, ACancelledEmbedLeavesTheWorkersBatchAndFreesItsKv) {
  testing::GatewayOptions options;
  options.model = "builtin:stories260K";
  auto started = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  testing::GatewayFixture& gateway = **started;
  shared::Result<v1::WorkerStats> before = gateway.WorkerStats(0);
  ASSERT_TRUE(before.ok()) << before.status().ToString();

  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(300));
  const v1::EmbedRequest request = LongInputs(kInputs, kTokensPerInput);
  v1::EmbedResponse response;
  grpc::Status answered;
  std::thread call([&] { answered = gateway.stub().Embed(&context, request, &response); });
  // Waits (bounded: 2000 polls 5 ms apart) until the worker runs the call's sequences.
  bool running = false;
  for (int polls = 0; polls < 2000 && !running; ++polls) {
    shared::Result<v1::WorkerStats> now = gateway.WorkerStats(0);
    running = now.ok() && Stat(*now, WorkerStat::kRunning) + Stat(*now, WorkerStat::kWaiting) > 0;
    if (!running) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  context.TryCancel();
  call.join();
  ASSERT_TRUE(running) << "the worker never ran the Embed call";
  EXPECT_EQ(answered.error_code(), grpc::StatusCode::CANCELLED) << answered.error_message();

  shared::Result<v1::WorkerStats> idle = gateway.WaitForIdleWorker(0);
  ASSERT_TRUE(idle.ok()) << idle.status().ToString();
  EXPECT_EQ(Stat(*idle, WorkerStat::kRunning), 0);
  EXPECT_EQ(Stat(*idle, WorkerStat::kWaiting), 0);
  EXPECT_EQ(Stat(*idle, WorkerStat::kKvPagesUsed), 0) << "the cancelled sequences' KV is free";
  const double prefilled =
      Stat(*idle, WorkerStat::kPrefillTokens) - Stat(*before, WorkerStat::kPrefillTokens);
  EXPECT_LT(prefilled, double{kInputs} * kTokensPerInput)
      << "the worker embedded every input: the cancel did not reach its sequences";

  // The worker serves the next call.
  grpc::ClientContext next_context;
  next_context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  v1::EmbedResponse next;
  const grpc::Status next_status = gateway.stub().Embed(&next_context, LongInputs(2, 8), &next);
  ASSERT_TRUE(next_status.ok()) << next_status.error_message();
  EXPECT_EQ(next.embeddings_size(), 2);
}

}  // namespace
}  // namespace smallmind
