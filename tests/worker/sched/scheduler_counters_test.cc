// The scheduler's step counters for Stats, with a stand-in for the engine: steps, prefill and
// decode tokens (recomputation after a preemption is prefill), the recent averages of tokens and
// sequences per step, the prompt prefix keys of cached prompts, and each sequence's execution
// record for its determinism receipt (the kernels and thread limits its steps ran with, its seed).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "shared/worker_stat_table.h"
#include "worker/sched/scheduler.h"
#include "worker/tokenizer/spm_tokenizer.h"

namespace smallmind::worker {
namespace {

class SchedulerCountersTest : public ::testing::Test {
 protected:
  void Build(int num_blocks, int block_size, SchedulerOptions options = {}) {
    pool_ = std::make_unique<BlockPool>(num_blocks, block_size);
    scheduler_ = std::make_unique<Scheduler>(options, pool_.get(), block_size);
    logits_.assign(static_cast<size_t>(options.max_seqs) * tokenizer_->vocab_size(), 0.0f);
  }
  void Add(uint64_t id, const std::string& prompt, int max_new,
           kernels::ExecMode mode = kernels::ExecMode::kParallel, int max_threads = 0) {
    SequenceRequest req;
    req.prompt = tokenizer_->Encode(prompt, true);
    req.mode = mode;
    req.max_threads = max_threads;
    req.sampling.seed = 9000 + id;
    req.sampling.temperature = 0;
    req.stopping.max_new_tokens = max_new;
    req.prefix_keys = shared::TextPromptPrefixKeys(prompt);
    scheduler_->Add(std::make_unique<Sequence>(id, std::move(req), *tokenizer_,
                                               tokenizer_->vocab_size(), nullptr));
  }
  // One step with all-zero logits (greedy picks id 0, which ends nothing here).
  bool Step() {
    while (!scheduler_->Schedule(&shape_)) {
      scheduler_->PreemptNewest();
      ++preemptions_;
    }
    if (shape_.entries.empty()) return false;
    scheduler_->Apply(shape_, &plan_);
    const int vocab = tokenizer_->vocab_size();
    SampleAndUpdate(scheduler_.get(), [&](int i) {
      return std::span<float>(logits_).subspan(static_cast<size_t>(i) * vocab, vocab);
    });
    for (const OutputEvent& e : scheduler_->mutable_output()->events()) {
      if (e.finished) finishes_[e.sequence_id] = e.finish;
    }
    scheduler_->mutable_output()->Clear();
    return true;
  }
  SchedulerStats& Stats() {
    scheduler_->PublishStats(&stats_);
    return stats_;
  }

  std::unique_ptr<SpmTokenizer> tokenizer_ = MakeByteLevelTokenizer();
  std::vector<float> logits_;
  std::unique_ptr<BlockPool> pool_;
  std::unique_ptr<Scheduler> scheduler_;
  StepShape shape_;
  StepPlan plan_;
  SchedulerStats stats_;
  std::map<uint64_t, FinishEvent> finishes_;
  int preemptions_ = 0;
};

TEST_F(SchedulerCountersTest, CountsStepsPrefillAndDecodeTokensAndTheirRecentAverages) {
  Build(64, 16);
  Add(1, "hello", 4);      // 6 prompt tokens with BOS
  Add(2, "greetings", 4);  // 10
  int steps = 0;
  while (steps < 100 && Step()) ++steps;
  ASSERT_EQ(steps, 4);  // one prefill step, then the first three sampled tokens are fed
  SchedulerStats& s = Stats();
  EXPECT_EQ(s.Get(shared::WorkerStat::kSteps), 4u);
  EXPECT_EQ(s.Get(shared::WorkerStat::kPrefillTokens), 16u);
  EXPECT_EQ(s.Get(shared::WorkerStat::kDecodeTokens), 6u);
  double tokens = 16;
  for (int i = 0; i < 3; ++i) tokens += (2 - tokens) / 16;
  EXPECT_DOUBLE_EQ(s.Get(shared::WorkerStat::kTokensPerStep), tokens);
  EXPECT_DOUBLE_EQ(s.Get(shared::WorkerStat::kSequencesPerStep), 2.0);
}

TEST_F(SchedulerCountersTest, RecomputationAfterAPreemptionCountsAsPrefill) {
  // 3 blocks of 4 positions: two sequences of 4 prompt tokens cannot both go on to position 4.
  // Without the prefix cache, the preempted one recomputes everything.
  SchedulerOptions options;
  options.prefix_cache.enabled = false;
  Build(3, 4, options);
  Add(1, "abc", 3);
  Add(2, "def", 3);
  int steps = 0;
  while (steps < 100 && Step()) ++steps;
  EXPECT_EQ(preemptions_, 1);
  SchedulerStats& s = Stats();
  // Step 1 prefills both prompts (8); sequence 2 is preempted at its first decode; sequence 1
  // decodes twice and finishes; sequence 2 recomputes its prompt and first token (5, prefill)
  // and decodes once.
  EXPECT_EQ(s.Get(shared::WorkerStat::kPrefillTokens), 13u);
  EXPECT_EQ(s.Get(shared::WorkerStat::kDecodeTokens), 3u);
  EXPECT_EQ(s.Get(shared::WorkerStat::kSteps), static_cast<uint64_t>(steps));
}

TEST_F(SchedulerCountersTest, PublishesThePrefixKeysOfPromptsWhoseBlocksAreCached) {
  Build(64, 16);
  const std::string prompt(300, 'k');  // 301 tokens: 18 full blocks
  Add(1, prompt, 2);
  Add(2, "short", 2);  // under the first cut: no key
  for (int i = 0; i < 100 && Step(); ++i) {
  }
  SchedulerStats& s = Stats();
  ASSERT_EQ(s.cached_prefix_key_count.load(), 1u);
  EXPECT_EQ(s.cached_prefix_keys[0].load(), shared::TextPromptPrefixKeys(prompt).keys[0].key);
}

TEST_F(SchedulerCountersTest, RecordsThePathAndThreadLimitThatActuallyRanEachSequence) {
  Build(64, 16);
  // A parallel request with a 2-thread limit shares its first steps with a deterministic one: those
  // steps run the deterministic kernels (valid for both) under the smallest limit; it finishes
  // alone, on its own path.
  Add(1, "parallel", 6, kernels::ExecMode::kParallel, /*max_threads=*/2);
  Add(2, "exact", 2, kernels::ExecMode::kDeterministic, /*max_threads=*/0);
  for (int i = 0; i < 100 && Step(); ++i) {
  }
  ASSERT_EQ(finishes_.size(), 2u);
  const ExecutionRecord& parallel = finishes_[1].execution;
  const ExecutionRecord& exact = finishes_[2].execution;
  // Step 1 prefills both, step 2 feeds both first tokens (2 finishes), steps 3-6 feed 1's.
  EXPECT_EQ(exact.deterministic_steps, 2);
  EXPECT_EQ(exact.parallel_steps, 0);
  EXPECT_EQ(exact.widest_threads, 2) << "it asked for all threads but shared its steps with 1";
  EXPECT_EQ(exact.seed, 9002u);
  EXPECT_EQ(parallel.deterministic_steps, 2);
  EXPECT_EQ(parallel.parallel_steps, 4);
  EXPECT_EQ(parallel.widest_threads, 2);
  EXPECT_EQ(parallel.seed, 9001u);

  Add(3, "queued", 2);
  scheduler_->Cancel(3);  // before any step: no kernels ran it
  EXPECT_EQ(finishes_.count(3), 0u);
  for (const OutputEvent& e : scheduler_->mutable_output()->events()) {
    if (e.finished) finishes_[e.sequence_id] = e.finish;
  }
  ASSERT_EQ(finishes_.count(3), 1u);
  EXPECT_EQ(finishes_[3].execution.deterministic_steps + finishes_[3].execution.parallel_steps, 0);
  EXPECT_EQ(finishes_[3].execution.widest_threads, -1);
}

}  // namespace
}  // namespace smallmind::worker
