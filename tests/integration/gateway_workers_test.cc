// A real gateway with two real worker processes on loopback, driven by a real gRPC client:
// concurrent streams, cancellation mid-stream, bad requests, and a worker killed with SIGKILL.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "shared/request_limits.h"
#include "shared/worker_stat_table.h"
#include "tests/testing/rpc/gateway_fixture.h"
#include "tests/testing/scoped_temp_dir.h"
#include "tests/testing/test_models.h"

namespace smallmind {
namespace {

using std::chrono::seconds;

v1::GenerateRequest Request(const std::string& prompt, int max_new, uint64_t seed) {
  v1::GenerateRequest req;
  req.set_prompt(prompt);
  req.mutable_sampling()->set_temperature(0.9f);
  req.mutable_sampling()->set_seed(seed);
  req.mutable_stopping()->set_max_new_tokens(max_new);
  return req;
}

// One gateway with two workers for the suite (each test leaves it as it found it).
class GatewayWorkersTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    testing::GatewayOptions options;
    options.workers = 2;
    auto started = testing::GatewayFixture::Start(options);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    gateway_ = std::move(started).value().release();
  }
  static void TearDownTestSuite() {
    delete gateway_;
    gateway_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(gateway_, nullptr); }

  static testing::GatewayFixture* gateway_;
};

testing::GatewayFixture* GatewayWorkersTest::gateway_ = nullptr;

TEST_F(GatewayWorkersTest, ConcurrentStreamsAllCompleteAcrossBothWorkers) {
  constexpr int kStreams = 6;
  std::vector<testing::GenerateOutcome> outcomes(kStreams);
  std::vector<std::thread> threads;
  for (int i = 0; i < kStreams; ++i) {
    threads.emplace_back([&, i] {
      auto req = Request("stream " + std::to_string(i), 24, 100 + i);
      req.set_request_id("c" + std::to_string(i));
      outcomes[i] = testing::RunGenerate(gateway_->stub(), req);
    });
  }
  for (auto& t : threads) t.join();
  std::set<uint32_t> workers;
  for (int i = 0; i < kStreams; ++i) {
    SCOPED_TRACE(i);
    ASSERT_TRUE(outcomes[i].status.ok()) << outcomes[i].status.error_message();
    EXPECT_EQ(outcomes[i].token_ids().size(), 24u);
    EXPECT_GE(outcomes[i].messages.size(), 2u) << "tokens must stream, not arrive at once";
    for (const auto& m : outcomes[i].messages) EXPECT_EQ(m.request_id(), "c" + std::to_string(i));
    EXPECT_EQ(outcomes[i].last()->finish_reason(), v1::LENGTH);
    workers.insert(outcomes[i].last()->timings().worker_id());
  }
  EXPECT_EQ(workers.size(), 2u) << "streams should be spread over both workers";
}

TEST_F(GatewayWorkersTest, SameSeedGivesSameTokensOnEitherWorker) {
  auto a = testing::RunGenerate(gateway_->stub(), Request("seeded", 16, 42));
  auto b = testing::RunGenerate(gateway_->stub(), Request("seeded", 16, 42));
  ASSERT_TRUE(a.status.ok() && b.status.ok());
  EXPECT_EQ(a.token_ids(), b.token_ids());
  EXPECT_NE(a.last()->timings().worker_id(), b.last()->timings().worker_id())
      << "round robin over idle workers sends the two requests to different workers";
}

// The receipt travels through the gateway unchanged: a request sent without a seed learns the
// seed the worker drew, and sending that seed again (to whichever worker the gateway picks)
// reproduces the stream token for token.
TEST_F(GatewayWorkersTest, ReceiptThroughTheGatewayReplaysAnUnseededRequest) {
  v1::GenerateRequest unseeded = Request("a receipt, please", 16, 0);
  unseeded.mutable_sampling()->clear_seed();
  unseeded.mutable_runtime()->set_deterministic(true);
  auto first = testing::RunGenerate(gateway_->stub(), unseeded);
  ASSERT_TRUE(first.status.ok()) << first.status.error_message();
  ASSERT_TRUE(first.last()->has_receipt()) << "the last message carries the receipt";
  const v1::DeterminismReceipt& receipt = first.last()->receipt();
  EXPECT_EQ(receipt.path(), v1::KERNEL_PATH_DETERMINISTIC);
  EXPECT_EQ(receipt.model_fingerprint().size(), 16u) << receipt.model_fingerprint();
  EXPECT_FALSE(receipt.kernel_isa().empty());
  EXPECT_GE(receipt.threads(), 1u);
  EXPECT_GE(receipt.deterministic_steps(), 1u);
  for (size_t i = 0; i + 1 < first.messages.size(); ++i) {
    EXPECT_FALSE(first.messages[i].has_receipt()) << "only the last message carries it";
  }

  v1::GenerateRequest replay = unseeded;
  replay.mutable_sampling()->set_seed(receipt.seed());
  auto second = testing::RunGenerate(gateway_->stub(), replay);
  ASSERT_TRUE(second.status.ok()) << second.status.error_message();
  EXPECT_EQ(second.token_ids(), first.token_ids());
  EXPECT_EQ(second.last()->receipt().seed(), receipt.seed());
  EXPECT_EQ(second.last()->receipt().model_fingerprint(), receipt.model_fingerprint());
}

TEST(GatewayCancelTest, CancelledStreamFreesItsKvBlocksAndServiceKeepsServing) {
  constexpr int kMaxNew = 8000;
  const testing::ScopedTempDir models;  // outlives the gateway that maps the file
  testing::GatewayOptions options;
  options.model = testing::LongContextTinyModel(models);
  ASSERT_FALSE(options.model.empty()) << "smallmind-modelgen failed";
  auto started = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  testing::GatewayFixture& gateway = **started;
  auto before = gateway.WorkerStats(0);
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  ASSERT_EQ(shared::ReadWorkerStat(before->values(), shared::WorkerStat::kKvPagesUsed), 0u)
      << "no request is running yet";

  grpc::ClientContext ctx;
  auto request = Request("cancel me", kMaxNew, 1);
  request.mutable_stopping()->set_ignore_eos(true);
  auto reader = gateway.stub().Generate(&ctx, request);
  v1::GenerateResponse msg;
  ASSERT_TRUE(reader->Read(&msg));
  EXPECT_EQ(msg.finish_reason(), v1::FINISH_REASON_UNSPECIFIED)
      << "first token came before the last";
  ctx.TryCancel();
  int more = 0;
  while (reader->Read(&msg) && more < kMaxNew) ++more;
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);

  // The worker frees the sequence's KV blocks within a step of the cancel reaching it: poll its
  // Stats (bounded) until nothing runs and no page is in use.
  const shared::Result<v1::WorkerStats> after = gateway.WaitForIdleWorker(0);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(shared::ReadWorkerStat(after->values(), shared::WorkerStat::kRunning) +
                shared::ReadWorkerStat(after->values(), shared::WorkerStat::kWaiting),
            0u)
      << "the cancelled sequence is still scheduled";
  EXPECT_EQ(shared::ReadWorkerStat(after->values(), shared::WorkerStat::kKvPagesUsed), 0u)
      << "the cancelled sequence's KV blocks were not freed";
  // And it was cancelled, not run to the end: the worker stopped generating early.
  EXPECT_LT(shared::ReadWorkerStat(after->values(), shared::WorkerStat::kGenerationTokens) -
                shared::ReadWorkerStat(before->values(), shared::WorkerStat::kGenerationTokens),
            static_cast<uint64_t>(kMaxNew));

  auto next = testing::RunGenerate(gateway.stub(), Request("after cancel", 8, 2));
  EXPECT_TRUE(next.status.ok()) << next.status.error_message();
}

TEST_F(GatewayWorkersTest, BadRequestsGetInvalidArgumentNamingTheProblem) {
  auto bad_top_p = Request("x", 4, 1);
  bad_top_p.mutable_sampling()->set_top_p(1.5f);
  auto r = testing::RunGenerate(gateway_->stub(), bad_top_p);
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(r.status.error_message().find("top_p"), std::string::npos) << r.status.error_message();

  v1::GenerateRequest too_long;
  for (int i = 0; i < 600; ++i) too_long.mutable_prompt_token_ids()->add_ids(100);
  r = testing::RunGenerate(gateway_->stub(), too_long);
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(r.status.error_message().find("context"), std::string::npos)
      << r.status.error_message();

  v1::GenerateRequest long_text;
  long_text.set_prompt(std::string(2000, 'a'));  // 2000 byte tokens > 512 positions
  r = testing::RunGenerate(gateway_->stub(), long_text);
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(r.status.error_message().find("context"), std::string::npos)
      << r.status.error_message();

  v1::GenerateRequest bad_id;
  bad_id.mutable_prompt_token_ids()->add_ids(100000);
  r = testing::RunGenerate(gateway_->stub(), bad_id);
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

// A request over gRPC's default 4 MiB but within the gateway's limit (the HTTP door's, 8 MiB)
// reaches the worker and gets its answer about the context; past the limit, RESOURCE_EXHAUSTED.
TEST_F(GatewayWorkersTest, RequestsUpToTheHttpDoorsLimitReachTheWorker) {
  v1::GenerateRequest big;  // 5M one-byte token ids: ~5 MiB on the wire
  big.mutable_prompt_token_ids()->mutable_ids()->Resize(5 << 20, 100);
  ASSERT_GT(big.ByteSizeLong(), size_t{4} << 20);
  ASSERT_LT(big.ByteSizeLong(), shared::kMaxRequestBytes);
  auto r = testing::RunGenerate(gateway_->stub(), big);
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(r.status.error_message().find("context"), std::string::npos)
      << r.status.error_message();

  v1::GenerateRequest too_big;
  too_big.mutable_prompt_token_ids()->mutable_ids()->Resize(9 << 20, 100);
  ASSERT_GT(too_big.ByteSizeLong(), shared::kMaxRequestBytes);
  r = testing::RunGenerate(gateway_->stub(), too_big);
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);

  // The gateway and its workers serve on.
  r = testing::RunGenerate(gateway_->stub(), Request("after", 4, 1));
  EXPECT_TRUE(r.status.ok()) << r.status.error_message();
}

// Children of every thread of `pid` (a child belongs to the thread that spawned it).
std::vector<pid_t> ChildrenOf(pid_t pid) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream in(task.path() / "children");
    pid_t child;
    while (in >> child) out.push_back(child);
  }
  return out;
}

// Its own gateway: killing a worker of the shared one would change what the other tests see.
TEST(GatewayWorkerRestartTest, KilledWorkerIsRestartedAndRequestsKeepSucceeding) {
  testing::GatewayOptions options;
  options.workers = 2;
  auto started = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  testing::GatewayFixture* gateway = started->get();
  std::vector<pid_t> before = ChildrenOf(gateway->process().pid());
  ASSERT_EQ(before.size(), 2u);
  ASSERT_EQ(kill(before[0], SIGKILL), 0);
  // Requests sent while the worker is down go to the survivor (retry before the first token).
  for (int i = 0; i < 4; ++i) {
    auto r = testing::RunGenerate(gateway->stub(), Request("survivor", 8, 10 + i));
    EXPECT_TRUE(r.status.ok()) << i << ": " << r.status.error_message();
  }
  // The supervisor restarts it: wait (bounded) for a new worker process beside the survivor and
  // for the gateway to report two ready workers again.
  bool back = false;
  for (int attempt = 0; attempt < 300 && !back; ++attempt) {
    std::vector<pid_t> now = ChildrenOf(gateway->process().pid());
    bool replaced = now.size() == 2 && std::find(now.begin(), now.end(), before[0]) == now.end();
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + seconds(5));
    v1::ModelInfo info;
    back = replaced && gateway->stub().GetModelInfo(&ctx, v1::GetModelInfoRequest(), &info).ok() &&
           info.workers() == 2;
    if (!back) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(back) << "the killed worker was not replaced by a ready one";
  auto r = testing::RunGenerate(gateway->stub(), Request("restarted", 8, 99));
  EXPECT_TRUE(r.status.ok()) << r.status.error_message();
}

}  // namespace
}  // namespace smallmind
