// The worker's Stats rpc carries the scheduler's activity and the prefix routing summary: steps,
// prefill and decode tokens, the recent per-step averages, and the prompt prefix keys of a prompt
// whose blocks the worker has cached (the keys a router computes from the same prompt).
#include <gtest/gtest.h>

#include <string>

#include "shared/prompt_prefix_key.h"
#include "shared/worker_stat_table.h"
#include "tests/testing/scoped_temp_dir.h"
#include "tests/worker/in_process_worker.h"
#include "worker/modelgen/model_generator.h"

namespace smallmind::worker {
namespace {

v1::GenerateRequest Greedy(const std::string& prompt, int max_new) {
  v1::GenerateRequest r;
  r.set_prompt(prompt);
  r.mutable_sampling()->set_temperature(0);
  r.mutable_stopping()->set_max_new_tokens(max_new);
  r.mutable_stopping()->set_ignore_eos(true);
  return r;
}

TEST(WorkerStatsTest, StatsCountStepsAndTokensAndListTheCachedPromptsPrefixKeys) {
  testing::InProcessWorker w;
  const std::string prompt(300, 'k');  // builtin:tiny: one token per byte, plus BOS
  const testing::SubmitResult a = w.Submit(Greedy(prompt, 3));
  ASSERT_TRUE(a.status.ok()) << a.status.error_message();
  const testing::SubmitResult b = w.Submit(Greedy("short", 3));
  ASSERT_TRUE(b.status.ok()) << b.status.error_message();

  const v1::WorkerStats s = w.Stats();
  EXPECT_EQ(shared::ReadWorkerStat(s.values(), shared::WorkerStat::kPreemptions), 0u);
  EXPECT_EQ(shared::ReadWorkerStat(s.values(), shared::WorkerStat::kDecodeTokens), 4u)
      << "2 sampled tokens fed per request";
  // Every prompt position is computed once (no prefix shared: the prompts differ from the start).
  EXPECT_EQ(shared::ReadWorkerStat(s.values(), shared::WorkerStat::kPrefillTokens),
            uint64_t{a.last().usage().prompt_tokens()} + b.last().usage().prompt_tokens());
  EXPECT_EQ(a.last().usage().prompt_tokens(), 301u) << "builtin:tiny: one token per 'k', plus BOS";
  EXPECT_GE(shared::ReadWorkerStat(s.values(), shared::WorkerStat::kSteps), 6u);
  EXPECT_GT(shared::ReadWorkerStat(s.values(), shared::WorkerStat::kTokensPerStep), 1.0);
  EXPECT_DOUBLE_EQ(shared::ReadWorkerStat(s.values(), shared::WorkerStat::kSequencesPerStep), 1.0)
      << "the two requests ran one after the other";
  EXPECT_EQ(shared::ReadWorkerStat(s.values(), shared::WorkerStat::kContextShifts), 0u);
  ASSERT_EQ(s.cached_prefix_keys_size(), 1) << "one prompt reaches the first cut; 'short' none";
  EXPECT_EQ(s.cached_prefix_keys(0), shared::TextPromptPrefixKeys(prompt).keys[0].key);
}

// smallmind_worker_weights_resident_bytes counts what the weights hold in memory now: for a
// mixture of experts in Q8_0 (32 experts, 2 used a token), at start well under the experts'
// bytes (an expert no token has picked is neither packed nor read), more once tokens route.
TEST(WorkerStatsTest, WeightsResidentBytesGrowAsExpertsAreFirstUsed) {
  smallmind::testing::ScopedTempDir dir("wst");
  GeneratorOptions moe;
  moe.architecture = "qwen3moe";
  moe.dim = 256;
  moe.n_heads = 4;
  moe.n_kv_heads = 2;
  moe.hidden_dim = 512;
  moe.n_experts = 32;
  moe.n_experts_used = 2;
  moe.weight_type = kernels::DType::kQ8_0;
  const std::string path = dir.File("moe.gguf");
  ASSERT_TRUE(WriteGeneratedModel(moe, path).ok());
  const uint64_t experts_bytes = uint64_t{2} * 3 * 32 * 512 * 256 * 34 / 32;  // Q8_0: 34 B / 32
  WorkerConfig config;
  config.model.model = path;
  testing::InProcessWorker w(config);
  const double at_start =
      shared::ReadWorkerStat(w.Stats().values(), shared::WorkerStat::kWeightsResidentBytes);
  EXPECT_GT(at_start, 0.0);
  EXPECT_LT(at_start, experts_bytes / 2.0) << "experts resident before any token used them";
  const testing::SubmitResult r = w.Submit(Greedy("abcdefghijklmnopqrstuvwxyz", 16));
  ASSERT_TRUE(r.status.ok()) << r.status.error_message();
  const double after =
      shared::ReadWorkerStat(w.Stats().values(), shared::WorkerStat::kWeightsResidentBytes);
  EXPECT_GT(after, at_start + 8 * 512 * 256) << "the routed experts are resident now";
}

}  // namespace
}  // namespace smallmind::worker
