// The scheduler with the real engine on the builtin model: continuous batching, chunked prefill,
// preemption when the pool runs out, cancellation, and the queue limit.
#include "worker/sched/scheduler.h"

#include <gtest/gtest.h>

#include "worker/engine/engine.h"
#include "worker/engine/engine_loop.h"
#include "worker/kv/kv_pool.h"
#include "worker/model/builtin_tiny.h"
#include "worker/tokenizer/spm_tokenizer.h"

namespace smallmind::worker {
namespace {

// Records what the scheduler streams for one sequence.
class RecordingSink : public SequenceSink {
 public:
  void OnTokens(const TokenEvent& e) override {
    ids.insert(ids.end(), e.token_ids.begin(), e.token_ids.end());
    text += e.text;
    ++messages;
  }
  void OnFinish(const FinishEvent& e) override {
    finish = e;
    ++finishes;
  }
  std::vector<TokenId> ids;
  std::string text;
  int messages = 0;
  int finishes = 0;
  FinishEvent finish;
};

class SchedulerTest : public ::testing::Test {
 protected:
  void Build(int num_blocks, int block_size, SchedulerOptions options) {
    kv_ = std::make_unique<KvPool>(model_.config, num_blocks, block_size);
    pool_ = std::make_unique<BlockPool>(num_blocks);
    engine_ = std::make_unique<Engine>(model_.config, model_.weights, kv_.get(),
                                       EngineOptions{options.max_step_tokens, options.max_seqs});
    scheduler_ = std::make_unique<Scheduler>(options, pool_.get(), block_size);
    loop_ = std::make_unique<EngineLoop>(scheduler_.get(), engine_.get(), &commands_, &stats_);
  }

  std::unique_ptr<Sequence> MakeSeq(uint64_t id, const std::string& prompt, int max_new,
                                    RecordingSink* sink, float temperature = 0) {
    SequenceRequest req;
    req.prompt = tokenizer_->Encode(prompt, true);
    req.sampling.temperature = temperature;
    req.sampling.seed = id;
    req.stopping.max_new_tokens = max_new;
    req.stopping.eos_id = -1;  // the random model would end stories at random otherwise
    return std::make_unique<Sequence>(id, std::move(req), *tokenizer_, model_.config.vocab_size,
                                      sink);
  }

  // Steps until idle (bounded); returns the number of steps.
  int RunToIdle(int max_steps = 10000) {
    int steps = 0;
    while (loop_->RunOnce() && steps < max_steps) ++steps;
    return steps;
  }

  std::vector<TokenId> Solo(const std::string& prompt, int max_new) {
    Build(64, 16, SchedulerOptions{});
    RecordingSink sink;
    commands_.Push(SubmitCommand{MakeSeq(999, prompt, max_new, &sink)});
    RunToIdle();
    return sink.ids;
  }

  LlamaModel model_ = MakeBuiltinTinyModel();
  std::unique_ptr<SpmTokenizer> tokenizer_ = MakeByteLevelTokenizer();
  std::unique_ptr<KvPool> kv_;
  std::unique_ptr<BlockPool> pool_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Scheduler> scheduler_;
  CommandQueue commands_;
  SchedulerStats stats_;
  std::unique_ptr<EngineLoop> loop_;
};

TEST_F(SchedulerTest, BatchedSequencesGiveTheSameGreedyTokensAsAlone) {
  const std::vector<std::string> prompts = {"a", "a longer prompt here", "mid size"};
  std::vector<std::vector<TokenId>> solo;
  for (const auto& p : prompts) solo.push_back(Solo(p, 20));

  Build(64, 16, SchedulerOptions{});
  std::vector<RecordingSink> sinks(prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    commands_.Push(SubmitCommand{MakeSeq(i + 1, prompts[i], 20, &sinks[i])});
  }
  int steps = RunToIdle();
  EXPECT_LT(steps, 3 * 21) << "sequences must share steps";
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(sinks[i].ids, solo[i]) << prompts[i];
    EXPECT_EQ(sinks[i].finishes, 1);
    EXPECT_EQ(sinks[i].finish.reason, FinishReason::kLength);
    EXPECT_EQ(sinks[i].finish.completion_tokens, 20);
  }
  EXPECT_EQ(pool_->num_used(), 0) << "finished sequences free their blocks";
}

TEST_F(SchedulerTest, LongPromptIsPrefilledInChunksWhileOthersDecode) {
  std::vector<TokenId> solo = Solo(std::string(100, 'x'), 4);
  SchedulerOptions options;
  options.max_step_tokens = 8;
  Build(64, 16, options);
  RecordingSink short_sink, long_sink;
  commands_.Push(SubmitCommand{MakeSeq(1, "hi", 30, &short_sink)});
  loop_->RunOnce();  // the short one is running
  commands_.Push(SubmitCommand{MakeSeq(2, std::string(100, 'x'), 4, &long_sink)});
  int steps = 0;
  while (long_sink.ids.empty() && steps++ < 100) loop_->RunOnce();
  // 101 prompt tokens at <= 7 per step (one slot goes to the decode) take >= 15 steps, during
  // which the short sequence kept producing a token every step.
  EXPECT_GE(short_sink.ids.size(), 14u);
  RunToIdle();
  EXPECT_EQ(long_sink.ids, solo) << "chunked prefill computes the same logits";
}

TEST_F(SchedulerTest, ExhaustedPoolPreemptsNewestAndEverySequenceStillCompletes) {
  const std::vector<std::string> prompts = {"first one", "second", "third seq"};
  std::vector<std::vector<TokenId>> solo;
  for (const auto& p : prompts) solo.push_back(Solo(p, 60));
  // 6 blocks of 16 tokens: three sequences of ~70 positions (5 blocks each) cannot all fit.
  Build(6, 16, SchedulerOptions{});
  std::vector<RecordingSink> sinks(prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    commands_.Push(SubmitCommand{MakeSeq(i + 1, prompts[i], 60, &sinks[i])});
  }
  RunToIdle();
  EXPECT_GT(stats_.preemptions_total.load(), 0u);
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(sinks[i].ids, solo[i]) << "recomputation after preemption gives the same tokens";
    EXPECT_EQ(sinks[i].finish.reason, FinishReason::kLength);
  }
  EXPECT_EQ(pool_->num_used(), 0);
}

TEST_F(SchedulerTest, CancelFinishesOnceAndFreesBlocksWithinOneStep) {
  Build(64, 16, SchedulerOptions{});
  RecordingSink running, waiting;
  commands_.Push(SubmitCommand{MakeSeq(1, "cancel me", 200, &running)});
  loop_->RunOnce();
  loop_->RunOnce();
  EXPECT_GT(pool_->num_used(), 0);
  commands_.Push(CancelCommand{1});
  loop_->RunOnce();
  EXPECT_EQ(running.finishes, 1);
  EXPECT_EQ(running.finish.reason, FinishReason::kCancelled);
  EXPECT_EQ(pool_->num_used(), 0);
  commands_.Push(CancelCommand{1});  // a late duplicate is ignored
  loop_->RunOnce();
  EXPECT_EQ(running.finishes, 1);
}

TEST_F(SchedulerTest, FullQueueRejectsWithResourceExhausted) {
  SchedulerOptions options;
  options.max_waiting = 2;
  Build(64, 16, options);
  std::vector<RecordingSink> sinks(3);
  for (int i = 0; i < 3; ++i) scheduler_->Add(MakeSeq(i + 1, "q", 4, &sinks[i]));
  EXPECT_EQ(sinks[2].finishes, 1);
  EXPECT_EQ(sinks[2].finish.status.code(), shared::StatusCode::kResourceExhausted);
  RunToIdle();
  EXPECT_EQ(sinks[0].finish.reason, FinishReason::kLength);
  EXPECT_EQ(sinks[1].finish.reason, FinishReason::kLength);
}

TEST_F(SchedulerTest, SeededSamplingIsReproducibleWhateverIsBatchedBeside) {
  Build(64, 16, SchedulerOptions{});
  RecordingSink alone;
  commands_.Push(SubmitCommand{MakeSeq(7, "sample", 24, &alone, 0.9f)});
  RunToIdle();
  Build(64, 16, SchedulerOptions{});
  RecordingSink batched, other;
  commands_.Push(SubmitCommand{MakeSeq(8, "other prompt", 30, &other, 0.9f)});
  commands_.Push(SubmitCommand{MakeSeq(7, "sample", 24, &batched, 0.9f)});
  RunToIdle();
  EXPECT_EQ(alone.ids, batched.ids);
}

}  // namespace
}  // namespace smallmind::worker
