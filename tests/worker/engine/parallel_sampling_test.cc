// Sampling on the engine's threads (EngineLoop lends the pool to Scheduler::Update): every
// sequence draws from its own RNG and logits row, so a batch sampled in parallel streams exactly
// the tokens, text and logprobs of the same batch sampled on one thread.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "tests/worker/engine/step_driver.h"
#include "tests/worker/engine/test_models.h"
#include "worker/modelgen/builtin_tiny.h"

namespace smallmind::worker {
namespace {

using testing::StepDriver;
using testing::StepDriverOptions;

// Twelve requests with every sampler feature somewhere: seeded temperature draws, top-k, top-p,
// min-p, repetition / presence / frequency penalties and logprobs.
SequenceRequest Request(int i, int vocab) {
  SequenceRequest req;
  for (int t = 0; t < 3 + 5 * i; ++t) {
    req.prompt.push_back(1 + static_cast<TokenId>((t * 31 + i * 17) % (vocab - 1)));
  }
  req.mode = kernels::ExecMode::kDeterministic;  // the same logits whatever the threads
  req.sampling.temperature = i % 4 == 0 ? 0.0f : 0.5f + 0.1f * static_cast<float>(i);
  req.sampling.seed = 7000 + static_cast<uint64_t>(i);
  req.sampling.top_k = i % 3 == 1 ? 5 + i : 0;
  req.sampling.top_p = i % 3 == 2 ? 0.9f : 1.0f;
  req.sampling.min_p = i % 5 == 3 ? 0.05f : 0.0f;
  req.sampling.repetition_penalty = i % 2 == 0 ? 1.15f : 1.0f;
  req.sampling.presence_penalty = i % 6 == 5 ? 0.5f : 0.0f;
  req.sampling.frequency_penalty = i % 4 == 2 ? 0.3f : 0.0f;
  req.sampling.logprobs = i % 3 == 0 ? 3 : 0;
  req.stopping.max_new_tokens = 12 + 3 * i;
  req.stopping.eos_id = -1;  // random models end at random otherwise
  return req;
}

TEST(ParallelSamplingTest, ParallelDrawsStreamTheSerialTokensTextAndLogprobs) {
  const LlamaModel model = MakeBuiltinTinyModel();
  constexpr int kRequests = 12;
  const auto run = [&](bool parallel) {
    StepDriverOptions o;
    o.threads = 3;
    o.max_seqs = 16;
    o.num_blocks = 256;
    o.max_step_tokens = 96;
    o.parallel_sampling = parallel;
    auto driver = std::make_unique<StepDriver>(model, o);
    for (int i = 0; i < kRequests; ++i) driver->Add(i + 1, Request(i, model.config.vocab_size));
    driver->RunToIdle();
    return driver;
  };
  auto serial = run(false);
  auto parallel = run(true);
  EXPECT_GE(parallel->max_batch(), 8) << "the test needs big batches to sample in parallel";
  for (uint64_t id = 1; id <= kRequests; ++id) {
    const testing::RecordedStream& want = serial->stream(id);
    const testing::RecordedStream& got = parallel->stream(id);
    ASSERT_EQ(want.finish.reason, FinishReason::kLength) << "request " << id;
    EXPECT_EQ(got.finish.reason, want.finish.reason) << "request " << id;
    EXPECT_EQ(got.ids, want.ids) << "request " << id;
    EXPECT_EQ(got.text, want.text) << "request " << id;
    EXPECT_EQ(got.logprob_ids, want.logprob_ids) << "request " << id;
    EXPECT_EQ(got.finishes, 1) << "request " << id;
  }
}

TEST(ParallelSamplingTest, EngineForEachRunsEveryIndexExactlyOnce) {
  const LlamaModel model = MakeBuiltinTinyModel();
  KvPool kv(model.config, 4, 8);
  EngineOptions options;
  options.num_threads = 3;
  Engine engine(model.config, model.weights, &kv, options);
  for (int n : {1, 2, 3, 7, 33, 64}) {
    std::vector<std::atomic<int>> calls(static_cast<size_t>(n));
    engine.ForEach(n, [&](int i) { calls[static_cast<size_t>(i)].fetch_add(1); });
    for (int i = 0; i < n; ++i) EXPECT_EQ(calls[static_cast<size_t>(i)].load(), 1) << i << "/" << n;
  }
}

}  // namespace
}  // namespace smallmind::worker
