// Deadlines end to end with a real gateway and worker: a stream whose gRPC deadline passes ends
// with DEADLINE_EXCEEDED, and the worker (which sees the deadline on its Submit call) cancels the
// sequence and frees its KV blocks.
#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "shared/worker_stat_table.h"
#include "tests/testing/rpc/gateway_fixture.h"
#include "tests/testing/scoped_temp_dir.h"
#include "tests/testing/test_models.h"

namespace smallmind {
namespace {

TEST(GatewayDeadlineTest, ExpiredDeadlineEndsTheStreamAndFreesTheWorkersKvBlocks) {
  constexpr int kMaxNew = 8000;
  const testing::ScopedTempDir models;  // outlives the gateway that maps the file
  testing::GatewayOptions options;
  // An 8000-token stream on it runs long enough for its deadline to pass mid-stream.
  options.model = testing::LongContextTinyModel(models);
  ASSERT_FALSE(options.model.empty()) << "smallmind-modelgen failed";
  auto started = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  testing::GatewayFixture& gateway = **started;
  auto before = gateway.WorkerStats(0);
  ASSERT_TRUE(before.ok()) << before.status().ToString();

  v1::GenerateRequest request;
  request.set_prompt("run out of time");
  request.mutable_sampling()->set_temperature(0.9f);
  request.mutable_sampling()->set_seed(7);
  request.mutable_stopping()->set_max_new_tokens(kMaxNew);
  request.mutable_stopping()->set_ignore_eos(true);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(1500));
  auto reader = gateway.stub().Generate(&ctx, request);
  v1::GenerateResponse msg;
  int messages = 0;
  while (reader->Read(&msg) && messages <= kMaxNew) ++messages;
  EXPECT_GT(messages, 0) << "the stream should have started before its deadline";
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);

  const shared::Result<v1::WorkerStats> after = gateway.WaitForIdleWorker(0);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(shared::ReadWorkerStat(after->values(), shared::WorkerStat::kRunning) +
                shared::ReadWorkerStat(after->values(), shared::WorkerStat::kWaiting),
            0u)
      << "the expired sequence is still scheduled";
  EXPECT_EQ(shared::ReadWorkerStat(after->values(), shared::WorkerStat::kKvPagesUsed), 0u)
      << "the expired sequence's KV blocks were not freed";
  EXPECT_LT(shared::ReadWorkerStat(after->values(), shared::WorkerStat::kGenerationTokens) -
                shared::ReadWorkerStat(before->values(), shared::WorkerStat::kGenerationTokens),
            static_cast<uint64_t>(kMaxNew))
      << "the worker ran the request to its end instead of stopping at the deadline";

  auto next = testing::RunGenerate(gateway.stub(), [] {
    v1::GenerateRequest r;
    r.set_prompt("after the deadline");
    r.mutable_stopping()->set_max_new_tokens(8);
    return r;
  }());
  EXPECT_TRUE(next.status.ok()) << next.status.error_message();
}

}  // namespace
}  // namespace smallmind
