// The determinism receipt on a request's last message: the path that actually ran, the kernel set,
// the threads, the model fingerprint and the seed used (drawn by the worker when none was given),
// and that it is enough to replay the request bit for bit on another worker with another thread
// count, batched beside other requests.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "kernels/dispatch.h"
#include "shared/worker_stat_table.h"
#include "tests/worker/in_process_worker.h"
#include "worker/model/model_fingerprint.h"

namespace smallmind::worker {
namespace {

v1::GenerateRequest Sampled(bool deterministic) {
  v1::GenerateRequest r;
  r.set_prompt("Once upon a time there was a little");
  r.mutable_sampling()->set_temperature(0.9f);
  r.mutable_sampling()->set_top_p(0.95f);
  r.mutable_stopping()->set_max_new_tokens(40);
  r.mutable_stopping()->set_ignore_eos(true);
  r.mutable_runtime()->set_deterministic(deterministic);
  r.set_logprobs(3);
  return r;
}

// Every token's chosen and top logprobs, as raw bits: equal only when the logits were.
std::vector<uint32_t> LogprobBits(const testing::SubmitResult& result) {
  std::vector<uint32_t> bits;
  auto push = [&](float f) {
    uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    bits.push_back(b);
  };
  for (const v1::GenerateResponse& m : result.messages) {
    for (const v1::TokenLogprobs& lp : m.logprobs()) {
      push(lp.logprob());
      for (const v1::TopLogprob& top : lp.top()) push(top.logprob());
    }
  }
  return bits;
}

// A stream that generates until the test cancels it, on its own thread.
class Background {
 public:
  explicit Background(testing::InProcessWorker* w) : stub_(w->NewStub()) {
    v1::SubmitRequest submit;
    submit.mutable_request()->set_prompt("background");
    submit.mutable_request()->mutable_stopping()->set_max_new_tokens(1u << 20);
    submit.mutable_request()->mutable_stopping()->set_ignore_eos(true);
    submit.mutable_request()->mutable_stopping()->set_context_overflow(v1::CONTEXT_OVERFLOW_SHIFT);
    thread_ = std::thread([this, submit] {
      auto reader = stub_->Submit(&context_, submit);
      v1::SubmitResponse message;
      while (reader->Read(&message)) {
      }
      status_ = reader->Finish();
    });
  }
  // Cancels the stream; returns how it ended.
  grpc::Status Stop() {
    context_.TryCancel();
    thread_.join();
    return status_;
  }

 private:
  std::unique_ptr<v1::Worker::Stub> stub_;
  grpc::ClientContext context_;
  grpc::Status status_;
  std::thread thread_;
};

TEST(DeterminismReceiptTest, SaysWhatRanAndReplaysBitForBitOnAnotherWorkerInABatch) {
  testing::InProcessWorker first;  // 1 thread
  const testing::SubmitResult original = first.Submit(Sampled(/*deterministic=*/true));
  ASSERT_TRUE(original.status.ok()) << original.status.error_message();
  ASSERT_EQ(original.token_ids.size(), 40u);
  const v1::DeterminismReceipt& receipt = original.last().receipt();
  EXPECT_EQ(receipt.path(), v1::KERNEL_PATH_DETERMINISTIC);
  EXPECT_EQ(receipt.kernel_isa(), kernels::IsaName(kernels::BestIsa()));
  EXPECT_EQ(receipt.kv_dtype(), "f16");  // the worker's default cache
  EXPECT_EQ(receipt.threads(), 1u);
  EXPECT_EQ(receipt.model_fingerprint(),
            FormatFingerprint(ModelFingerprint(first.worker().model().llama)));
  EXPECT_GE(receipt.deterministic_steps(), 40u) << "a prefill step, then one per fed token";
  EXPECT_EQ(receipt.parallel_steps(), 0u);
  for (size_t i = 0; i + 1 < original.messages.size(); ++i) {
    EXPECT_FALSE(original.messages[i].has_receipt()) << "only the last message carries it";
  }

  // Another worker with 3 threads, two endless streams running beside the replay.
  WorkerConfig config;
  config.threads = 3;
  testing::InProcessWorker second(config);
  EXPECT_EQ(receipt.model_fingerprint(),
            FormatFingerprint(ModelFingerprint(second.worker().model().llama)));
  Background a(&second);
  Background b(&second);
  int polls = 0;
  while (shared::ReadWorkerStat(second.Stats().values(), shared::WorkerStat::kRunning) < 2 &&
         ++polls < 100000) {
  }
  ASSERT_EQ(shared::ReadWorkerStat(second.Stats().values(), shared::WorkerStat::kRunning), 2u)
      << "the background streams never started";

  v1::GenerateRequest replay = Sampled(/*deterministic=*/true);
  replay.mutable_sampling()->set_seed(receipt.seed());
  const testing::SubmitResult again = second.Submit(replay);
  // Both still running (they end only when cancelled): the replay was batched beside them.
  EXPECT_EQ(a.Stop().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(b.Stop().error_code(), grpc::StatusCode::CANCELLED);
  ASSERT_TRUE(again.status.ok()) << again.status.error_message();
  EXPECT_EQ(again.token_ids, original.token_ids);
  EXPECT_EQ(LogprobBits(again), LogprobBits(original));
  EXPECT_EQ(again.last().receipt().seed(), receipt.seed());
  EXPECT_EQ(again.last().receipt().threads(), 3u);
  EXPECT_EQ(again.last().receipt().path(), v1::KERNEL_PATH_DETERMINISTIC);
}

TEST(DeterminismReceiptTest, AParallelRequestAloneReportsTheParallelPathAndTheSeedItWasGiven) {
  testing::InProcessWorker w;
  v1::GenerateRequest r = Sampled(/*deterministic=*/false);
  r.mutable_sampling()->set_seed(1234);
  const testing::SubmitResult result = w.Submit(r);
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  const v1::DeterminismReceipt& receipt = result.last().receipt();
  EXPECT_EQ(receipt.path(), v1::KERNEL_PATH_PARALLEL);
  EXPECT_EQ(receipt.deterministic_steps(), 0u);
  EXPECT_GE(receipt.parallel_steps(), 40u);
  EXPECT_EQ(receipt.seed(), 1234u);
}

}  // namespace
}  // namespace smallmind::worker
