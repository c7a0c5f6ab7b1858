// The step loop with the real engine on the builtin model: continuous batching gives each sequence
// its solo tokens, chunked prefill, preemption when the pool runs out, cancellation through the
// command queue, and Run()'s shutdown (cancel what is left, publish, close the output queue).
#include "worker/engine/engine_loop.h"

#include <gtest/gtest.h>

#include "shared/worker_stat_table.h"
#include "tests/worker/sched/stream_recorder.h"
#include "worker/engine/engine.h"
#include "worker/kv/kv_pool.h"
#include "worker/modelgen/builtin_tiny.h"
#include "worker/tokenizer/spm_tokenizer.h"

namespace smallmind::worker {
namespace {

using testing::StreamRecorder;

class EngineLoopTest : public ::testing::Test {
 protected:
  void Build(int num_blocks, int block_size, SchedulerOptions options) {
    kv_ = std::make_unique<KvPool>(model_.config, num_blocks, block_size);
    pool_ = std::make_unique<BlockPool>(num_blocks, block_size);
    engine_ = std::make_unique<Engine>(model_.config, model_.weights, kv_.get(),
                                       EngineOptions{options.max_step_tokens, options.max_seqs});
    scheduler_ = std::make_unique<Scheduler>(options, pool_.get(), block_size);
    commands_ = std::make_unique<CommandQueue>();
    outputs_ = std::make_unique<OutputQueue>();
    recorder_ = StreamRecorder();
    loop_ = std::make_unique<EngineLoop>(scheduler_.get(), engine_.get(), commands_.get(),
                                         outputs_.get(), &stats_);
  }

  std::unique_ptr<Sequence> MakeSeq(uint64_t id, const std::string& prompt, int max_new,
                                    float temperature = 0) {
    SequenceRequest req;
    req.prompt = tokenizer_->Encode(prompt, true);
    req.sampling.temperature = temperature;
    req.sampling.seed = id;
    req.stopping.max_new_tokens = max_new;
    req.stopping.eos_id = -1;  // the random model would end stories at random otherwise
    return std::make_unique<Sequence>(id, std::move(req), *tokenizer_, model_.config.vocab_size,
                                      nullptr);
  }

  // One loop iteration, then records what it published.
  bool RunOnce() {
    bool ran = loop_->RunOnce();
    recorder_.Drain(outputs_.get());
    return ran;
  }
  // Steps until idle (bounded); returns the number of steps.
  int RunToIdle(int max_steps = 10000) {
    int steps = 0;
    while (steps < max_steps && RunOnce()) ++steps;
    return steps;
  }

  std::vector<TokenId> Solo(const std::string& prompt, int max_new) {
    Build(64, 16, SchedulerOptions{});
    commands_->Push(SubmitCommand{MakeSeq(999, prompt, max_new)});
    RunToIdle();
    return recorder_[999].ids;
  }

  LlamaModel model_ = MakeBuiltinTinyModel();
  std::unique_ptr<SpmTokenizer> tokenizer_ = MakeByteLevelTokenizer();
  std::unique_ptr<KvPool> kv_;
  std::unique_ptr<BlockPool> pool_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<CommandQueue> commands_;
  std::unique_ptr<OutputQueue> outputs_;
  SchedulerStats stats_;
  std::unique_ptr<EngineLoop> loop_;
  StreamRecorder recorder_;
};

TEST_F(EngineLoopTest, BatchedSequencesGiveTheSameGreedyTokensAsAlone) {
  const std::vector<std::string> prompts = {"a", "a longer prompt here", "mid size"};
  std::vector<std::vector<TokenId>> solo;
  for (const auto& p : prompts) solo.push_back(Solo(p, 20));

  Build(64, 16, SchedulerOptions{});
  for (size_t i = 0; i < prompts.size(); ++i) {
    commands_->Push(SubmitCommand{MakeSeq(i + 1, prompts[i], 20)});
  }
  int steps = RunToIdle();
  EXPECT_LT(steps, 3 * 21) << "sequences must share steps";
  for (size_t i = 0; i < prompts.size(); ++i) {
    const auto& s = recorder_[i + 1];
    EXPECT_EQ(s.ids, solo[i]) << prompts[i];
    EXPECT_EQ(s.finishes, 1);
    EXPECT_EQ(s.events_after_finish, 0);
    EXPECT_EQ(s.finish.reason, FinishReason::kLength);
    EXPECT_EQ(s.finish.completion_tokens, 20);
  }
  EXPECT_EQ(pool_->num_used(), 0) << "finished sequences free their blocks";
}

TEST_F(EngineLoopTest, LongPromptIsPrefilledInChunksWhileOthersDecode) {
  std::vector<TokenId> solo = Solo(std::string(100, 'x'), 4);
  SchedulerOptions options;
  options.max_step_tokens = 8;
  Build(64, 16, options);
  commands_->Push(SubmitCommand{MakeSeq(1, "hi", 30)});
  RunOnce();  // the short one is running
  commands_->Push(SubmitCommand{MakeSeq(2, std::string(100, 'x'), 4)});
  int steps = 0;
  while (recorder_[2].ids.empty() && steps++ < 100) RunOnce();
  // 101 prompt tokens at <= 7 per step (one slot goes to the decode) take >= 15 steps, during
  // which the short sequence kept producing a token every step.
  EXPECT_GE(recorder_[1].ids.size(), 14u);
  RunToIdle();
  EXPECT_EQ(recorder_[2].ids, solo) << "chunked prefill computes the same logits";
}

TEST_F(EngineLoopTest, ExhaustedPoolPreemptsNewestAndEverySequenceStillCompletes) {
  const std::vector<std::string> prompts = {"first one", "second", "third seq"};
  std::vector<std::vector<TokenId>> solo;
  for (const auto& p : prompts) solo.push_back(Solo(p, 60));
  // 6 blocks of 16 tokens: three sequences of ~70 positions (5 blocks each) cannot all fit.
  Build(6, 16, SchedulerOptions{});
  for (size_t i = 0; i < prompts.size(); ++i) {
    commands_->Push(SubmitCommand{MakeSeq(i + 1, prompts[i], 60)});
  }
  RunToIdle();
  EXPECT_GT(stats_.Get(shared::WorkerStat::kPreemptions), 0u);
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(recorder_[i + 1].ids, solo[i]) << "recomputation after preemption, same tokens";
    EXPECT_EQ(recorder_[i + 1].finish.reason, FinishReason::kLength);
  }
  EXPECT_EQ(pool_->num_used(), 0);
}

TEST_F(EngineLoopTest, CancelCommandFinishesOnceAndFreesBlocksWithinOneStep) {
  Build(64, 16, SchedulerOptions{});
  commands_->Push(SubmitCommand{MakeSeq(1, "cancel me", 200)});
  RunOnce();
  RunOnce();
  EXPECT_GT(pool_->num_used(), 0);
  commands_->Push(CancelCommand{1});
  RunOnce();
  EXPECT_EQ(recorder_[1].finishes, 1);
  EXPECT_EQ(recorder_[1].finish.reason, FinishReason::kCancelled);
  EXPECT_EQ(pool_->num_used(), 0);
  commands_->Push(CancelCommand{1});  // a late duplicate is ignored
  RunOnce();
  EXPECT_EQ(recorder_[1].finishes, 1);
  EXPECT_EQ(recorder_[1].events_after_finish, 0);
}

TEST_F(EngineLoopTest, SeededSamplingIsReproducibleWhateverIsBatchedBeside) {
  Build(64, 16, SchedulerOptions{});
  commands_->Push(SubmitCommand{MakeSeq(7, "sample", 24, 0.9f)});
  RunToIdle();
  const std::vector<TokenId> alone = recorder_[7].ids;
  Build(64, 16, SchedulerOptions{});
  commands_->Push(SubmitCommand{MakeSeq(8, "other prompt", 30, 0.9f)});
  commands_->Push(SubmitCommand{MakeSeq(7, "sample", 24, 0.9f)});
  RunToIdle();
  EXPECT_EQ(recorder_[7].ids, alone);
}

TEST_F(EngineLoopTest, RunCancelsWhatIsLeftPublishesItAndClosesTheOutputQueue) {
  Build(64, 16, SchedulerOptions{});
  commands_->Push(SubmitCommand{MakeSeq(1, "left over", 50)});
  commands_->Close();
  loop_->Run();  // returns at once: the queue is closed
  StepOutput taken;
  ASSERT_TRUE(outputs_->Take(&taken));
  recorder_.Record(taken);
  EXPECT_FALSE(outputs_->Take(&taken)) << "closed and drained";
  EXPECT_EQ(recorder_[1].finishes, 1);
  EXPECT_EQ(recorder_[1].finish.reason, FinishReason::kCancelled);
  EXPECT_EQ(pool_->num_used(), 0);
}

}  // namespace
}  // namespace smallmind::worker
