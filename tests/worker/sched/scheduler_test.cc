// The scheduler on its own, fed by a scripted stand-in for the engine (the engine-backed cases are
// in tests/worker/engine/engine_loop_test.cc): what each step publishes to the OutputQueue (tokens
// in order, the finish last and once, nothing after it), cancellation, preemption, the queue
// limit, and the stream semantics it keeps (stop strings held back, UTF-8-whole deltas, EOS not
// streamed, logprobs).
#include "worker/sched/scheduler.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "tests/worker/sched/stream_recorder.h"
#include "worker/sched/output_queue.h"
#include "worker/tokenizer/spm_tokenizer.h"

namespace smallmind::worker {
namespace {

using testing::StreamRecorder;

// The byte-level vocabulary: byte b is token 3 + b.
TokenId ByteToken(char c) { return 3 + static_cast<unsigned char>(c); }

class SchedulerTest : public ::testing::Test {
 protected:
  void Build(int num_blocks, int block_size, SchedulerOptions options = {}) {
    pool_ = std::make_unique<BlockPool>(num_blocks, block_size);
    scheduler_ = std::make_unique<Scheduler>(options, pool_.get(), block_size);
    logits_.assign(static_cast<size_t>(options.max_seqs) * vocab_, 0.0f);
  }

  std::unique_ptr<Sequence> MakeSeq(uint64_t id, const std::string& prompt, int max_new,
                                    StopConfig stopping = {}, int logprobs = 0) {
    SequenceRequest req;
    req.prompt = tokenizer_->Encode(prompt, true);
    req.sampling.temperature = 0;
    req.sampling.logprobs = logprobs;
    req.stopping = std::move(stopping);
    req.stopping.max_new_tokens = max_new;
    return std::make_unique<Sequence>(id, std::move(req), *tokenizer_, vocab_, nullptr);
  }

  // One step as the EngineLoop runs it, with the scripted logits in place of the engine; then
  // the step's events are published and recorded. False when nothing was scheduled.
  bool Step() {
    while (!scheduler_->Schedule(&shape_)) {
      scheduler_->PreemptNewest();
      ++preemptions_;
    }
    bool ran = !shape_.entries.empty();
    if (ran) {
      scheduler_->Apply(shape_, &plan_);
      SampleAndUpdate(scheduler_.get(), [this](int i) { return ScriptedLogits(i); });
    }
    outputs_.Publish(scheduler_->mutable_output());
    recorder_.Drain(&outputs_);
    return ran;
  }
  int RunToIdle(int max_steps = 1000) {
    int steps = 0;
    while (steps < max_steps && Step()) ++steps;
    return steps;
  }
  // Publishes and records what commands (Add, Cancel) produced outside a step.
  void Flush() {
    outputs_.Publish(scheduler_->mutable_output());
    recorder_.Drain(&outputs_);
  }

  // Logits of plan entry i: a single peak on script_(position of the token being predicted).
  std::span<float> ScriptedLogits(int i) {
    const SeqStep& s = plan_.seqs[i];
    std::span<float> out(logits_.data() + static_cast<size_t>(i) * vocab_, vocab_);
    std::fill(out.begin(), out.end(), 0.0f);
    out[script_(s.start_pos + static_cast<int>(s.tokens.size()))] = 10.0f;
    return out;
  }

  std::unique_ptr<SpmTokenizer> tokenizer_ = MakeByteLevelTokenizer();
  const int vocab_ = tokenizer_->vocab_size();
  // The token the stand-in model predicts at a position: by default 'a', 'b', ... cycling.
  std::function<TokenId(int)> script_ = [](int pos) { return ByteToken('a' + pos % 26); };
  std::vector<float> logits_;
  std::unique_ptr<BlockPool> pool_;
  std::unique_ptr<Scheduler> scheduler_;
  StepShape shape_;
  StepPlan plan_;
  int preemptions_ = 0;
  OutputQueue outputs_;
  StreamRecorder recorder_;
};

// What the default script streams for a prompt of `prompt_tokens` tokens.
std::string Expected(int prompt_tokens, int n) {
  std::string text;
  for (int k = 0; k < n; ++k) text += static_cast<char>('a' + (prompt_tokens + k) % 26);
  return text;
}

TEST_F(SchedulerTest, EachSequenceStreamsItsTokensInOrderAndTheFinishLast) {
  Build(64, 16);
  const std::vector<std::string> prompts = {"a", "a longer prompt here", "mid size"};
  for (size_t i = 0; i < prompts.size(); ++i) {
    scheduler_->Add(MakeSeq(i + 1, prompts[i], 5 + 3 * static_cast<int>(i)));
  }
  int steps = RunToIdle();
  EXPECT_LT(steps, 15) << "the sequences share steps";
  for (size_t i = 0; i < prompts.size(); ++i) {
    const auto& s = recorder_[i + 1];
    const int n = 5 + 3 * static_cast<int>(i);
    const int prompt_tokens = static_cast<int>(prompts[i].size()) + 1;  // BOS
    EXPECT_EQ(s.text, Expected(prompt_tokens, n)) << prompts[i];
    EXPECT_EQ(s.ids.size(), static_cast<size_t>(n));
    EXPECT_EQ(s.deltas.size(), static_cast<size_t>(n)) << "one event per token";
    EXPECT_EQ(s.finishes, 1);
    EXPECT_EQ(s.events_after_finish, 0);
    EXPECT_EQ(s.finish.reason, FinishReason::kLength);
    EXPECT_EQ(s.finish.prompt_tokens, prompt_tokens);
    EXPECT_EQ(s.finish.completion_tokens, n);
  }
  EXPECT_EQ(pool_->num_used(), 0) << "finished sequences free their blocks";
}

TEST_F(SchedulerTest, CancelMidStreamFreesBlocksAtOnceAndEndsTheStream) {
  Build(64, 16);
  scheduler_->Add(MakeSeq(1, "cancel me", 200));
  scheduler_->Add(MakeSeq(2, "keep me", 20));
  for (int i = 0; i < 3; ++i) Step();
  ASSERT_EQ(recorder_[1].ids.size(), 3u);
  const int used_by_both = pool_->num_used();
  scheduler_->Cancel(1);
  EXPECT_LT(pool_->num_used(), used_by_both) << "the cancelled sequence's blocks are free";
  RunToIdle();
  const auto& cancelled = recorder_[1];
  EXPECT_EQ(cancelled.finishes, 1);
  EXPECT_EQ(cancelled.finish.reason, FinishReason::kCancelled);
  EXPECT_EQ(cancelled.finish.completion_tokens, 3);
  EXPECT_EQ(cancelled.events_after_finish, 0);
  EXPECT_EQ(cancelled.ids.size(), 3u) << "no token after the cancel";
  EXPECT_EQ(recorder_[2].finish.reason, FinishReason::kLength) << "the other one runs on";
  EXPECT_EQ(pool_->num_used(), 0);

  scheduler_->Cancel(1);  // a late duplicate is ignored
  Flush();
  EXPECT_EQ(recorder_[1].finishes, 1);
  EXPECT_EQ(recorder_[1].events_after_finish, 0);
}

TEST_F(SchedulerTest, CancelOfAWaitingSequenceFinishesItWithoutTokens) {
  SchedulerOptions options;
  options.max_seqs = 1;
  Build(64, 16, options);
  scheduler_->Add(MakeSeq(1, "runs", 10));
  scheduler_->Add(MakeSeq(2, "waits", 10));
  Step();
  scheduler_->Cancel(2);
  RunToIdle();
  EXPECT_EQ(recorder_[2].finishes, 1);
  EXPECT_EQ(recorder_[2].finish.reason, FinishReason::kCancelled);
  EXPECT_TRUE(recorder_[2].ids.empty());
  EXPECT_EQ(recorder_[1].finish.completion_tokens, 10);
}

TEST_F(SchedulerTest, FullQueueRejectsWithResourceExhaustedAsTheOnlyEvent) {
  SchedulerOptions options;
  options.max_waiting = 2;
  Build(64, 16, options);
  for (int i = 0; i < 3; ++i) scheduler_->Add(MakeSeq(i + 1, "q", 4));
  Flush();
  EXPECT_EQ(recorder_[3].finishes, 1);
  EXPECT_EQ(recorder_[3].finish.status.code(), shared::StatusCode::kResourceExhausted);
  EXPECT_NE(recorder_[3].finish.status.message().find("queue is full"), std::string::npos);
  RunToIdle();
  EXPECT_TRUE(recorder_[3].ids.empty());
  EXPECT_EQ(recorder_[1].finish.reason, FinishReason::kLength);
  EXPECT_EQ(recorder_[2].finish.reason, FinishReason::kLength);
}

TEST_F(SchedulerTest, PreemptedSequencesStreamEachTokenOnce) {
  // 6 blocks of 8 tokens: three sequences of ~45 positions (6 blocks each) cannot all fit.
  Build(6, 8);
  for (int i = 0; i < 3; ++i) scheduler_->Add(MakeSeq(i + 1, "pre" + std::to_string(i), 40));
  RunToIdle();
  EXPECT_GT(preemptions_, 0);
  for (int i = 0; i < 3; ++i) {
    const auto& s = recorder_[i + 1];
    EXPECT_EQ(s.text, Expected(5, 40)) << "recomputation streams nothing twice";
    EXPECT_EQ(s.finish.reason, FinishReason::kLength);
    EXPECT_EQ(s.finishes, 1);
  }
  EXPECT_EQ(pool_->num_used(), 0);
}

TEST_F(SchedulerTest, PrefillChunksStayUnderTheCapWhileSequencesDecode) {
  SchedulerOptions options;
  options.max_step_tokens = 64;
  options.max_prefill_tokens_while_decoding = 8;
  Build(64, 16, options);
  const std::string long_prompt(40, 'p');  // 41 tokens with the BOS
  scheduler_->Add(MakeSeq(1, "a", 30));
  ASSERT_TRUE(Step());  // sequence 1's prompt; it decodes from the next step on
  scheduler_->Add(MakeSeq(2, long_prompt, 3));
  int prefilled = 0;
  for (int step = 0; step < 6; ++step) {  // 41 prompt tokens in chunks of at most 8
    ASSERT_TRUE(Step());
    // Decodes come first in a plan: sequence 1's, then sequence 2's chunk.
    ASSERT_EQ(plan_.seqs.size(), 2u) << "step " << step;
    EXPECT_EQ(plan_.seqs[0].tokens.size(), 1u) << "sequence 1 decodes in every step";
    EXPECT_LE(plan_.seqs[1].tokens.size(), 8u) << "step " << step;
    prefilled += static_cast<int>(plan_.seqs[1].tokens.size());
  }
  EXPECT_EQ(prefilled, 41);
  RunToIdle();
  EXPECT_EQ(recorder_[1].text, Expected(2, 30));
  EXPECT_EQ(recorder_[2].text, Expected(41, 3)) << "chunking changes no token";

  // Alone, a prompt as long is prefilled under the step budget only: one step.
  scheduler_->Add(MakeSeq(3, std::string(40, 'q'), 1));
  ASSERT_TRUE(Step());
  ASSERT_EQ(plan_.seqs.size(), 1u);
  EXPECT_EQ(plan_.seqs[0].tokens.size(), 41u);
}

TEST_F(SchedulerTest, PrefillCapGrowsToTwiceTheDecodingSequences) {
  SchedulerOptions options;
  options.max_step_tokens = 64;
  options.max_prefill_tokens_while_decoding = 4;
  Build(64, 16, options);
  for (int i = 1; i <= 5; ++i) scheduler_->Add(MakeSeq(i, "s" + std::to_string(i), 20));
  ASSERT_TRUE(Step());  // the five prompts; they decode from the next step on
  scheduler_->Add(MakeSeq(6, std::string(40, 'p'), 1));
  ASSERT_TRUE(Step());
  ASSERT_EQ(plan_.seqs.size(), 6u);
  EXPECT_EQ(plan_.seqs[5].tokens.size(), 10u) << "5 decodes: 2 x 5 prompt tokens, not 4";
}

TEST_F(SchedulerTest, StopStringIsHeldBackAcrossTokensAndNeverStreamed) {
  Build(64, 16);
  const std::string script = "abXcXYz";
  script_ = [&](int pos) { return ByteToken(script[std::min<size_t>(pos - 2, 6)]); };
  StopConfig stopping;
  stopping.stop = {"XY"};
  scheduler_->Add(MakeSeq(1, "p", 20, stopping));
  RunToIdle();
  const auto& s = recorder_[1];
  EXPECT_EQ(s.text, "abXc");
  EXPECT_EQ(s.deltas, (std::vector<std::string>{"a", "b", "", "Xc", "", ""}))
      << "an X may start the stop string: held until the next token decides";
  EXPECT_EQ(s.finish.reason, FinishReason::kStop);
  EXPECT_EQ(s.finish.completion_tokens, 6);
}

TEST_F(SchedulerTest, SplitCodePointIsStreamedWholeInOneDelta) {
  Build(64, 16);
  const std::string script = "\xC3\xA9!";  // "é!": é is two bytes, two tokens
  script_ = [&](int pos) { return ByteToken(script[std::min<size_t>(pos - 2, 2)]); };
  scheduler_->Add(MakeSeq(1, "p", 3));
  RunToIdle();
  EXPECT_EQ(recorder_[1].deltas, (std::vector<std::string>{"", "\xC3\xA9", "!"}));
  EXPECT_EQ(recorder_[1].ids.size(), 3u);
}

TEST_F(SchedulerTest, EosEndsTheStreamWithoutStreamingTheEosToken) {
  Build(64, 16);
  const TokenId eos = 2;
  script_ = [&](int pos) { return pos < 5 ? ByteToken('k') : eos; };
  StopConfig stopping;
  stopping.eos_id = eos;
  scheduler_->Add(MakeSeq(1, "p", 20, stopping));
  RunToIdle();
  const auto& s = recorder_[1];
  EXPECT_EQ(s.text, "kkk");
  EXPECT_EQ(s.ids, (std::vector<TokenId>(3, ByteToken('k'))));
  EXPECT_EQ(s.finish.reason, FinishReason::kEos);
  EXPECT_EQ(s.finish.completion_tokens, 3) << "EOS is not a completion token";
}

TEST_F(SchedulerTest, LogprobsComeOnePerStreamedToken) {
  Build(64, 16);
  scheduler_->Add(MakeSeq(1, "lp", 6, {}, /*logprobs=*/2));
  scheduler_->Add(MakeSeq(2, "none", 6));
  RunToIdle();
  EXPECT_EQ(recorder_[1].logprob_ids, recorder_[1].ids);
  EXPECT_TRUE(recorder_[2].logprob_ids.empty());
}

TEST_F(SchedulerTest, EventsOfUntakenStepsCoalesceInOrder) {
  Build(64, 16);
  scheduler_->Add(MakeSeq(1, "x", 6));
  for (int step = 0; step < 6; ++step) {  // published every step, taken only at the end
    while (!scheduler_->Schedule(&shape_)) scheduler_->PreemptNewest();
    scheduler_->Apply(shape_, &plan_);
    SampleAndUpdate(scheduler_.get(), [this](int i) { return ScriptedLogits(i); });
    outputs_.Publish(scheduler_->mutable_output());
    EXPECT_TRUE(scheduler_->mutable_output()->empty()) << "publishing hands the events over";
  }
  EXPECT_EQ(recorder_.Drain(&outputs_), 7) << "six token events and the finish, in one take";
  EXPECT_EQ(recorder_[1].text, Expected(2, 6));
  EXPECT_EQ(recorder_[1].finishes, 1);
  EXPECT_EQ(recorder_[1].events_after_finish, 0);
}

}  // namespace
}  // namespace smallmind::worker
