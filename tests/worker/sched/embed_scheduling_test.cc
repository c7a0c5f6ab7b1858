// Embedding sequences in the scheduler (SequenceRequest::embed): an encoder's inputs run whole in
// one step each, as many as the step's token budget holds, with no KV blocks; one too long for a
// step is refused; a decoder's input is prefilled in chunks and pooled at its last chunk, never
// sampled; every finish carries its embedding.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "worker/sched/scheduler.h"
#include "worker/tokenizer/spm_tokenizer.h"

namespace smallmind::worker {
namespace {

class EmbedSchedulingTest : public ::testing::Test {
 protected:
  void Build(SchedulerOptions options) {
    pool_ = std::make_unique<BlockPool>(32, 4);
    scheduler_ = std::make_unique<Scheduler>(options, pool_.get(), 4);
  }
  void Add(uint64_t id, int n_tokens, PoolingType pooling) {
    SequenceRequest req;
    for (int i = 0; i < n_tokens; i++) req.prompt.push_back(3 + i);
    req.embed = pooling;
    req.stopping.max_new_tokens = 1;
    scheduler_->Add(std::make_unique<Sequence>(id, std::move(req), *tokenizer_, 259, nullptr));
  }
  // One step; the pooled vector of entry `row` is {row, tokens of its slice}. Returns the plan.
  StepPlan Step() {
    StepShape shape;
    EXPECT_TRUE(scheduler_->Schedule(&shape));
    StepPlan plan;
    if (shape.entries.empty()) return plan;
    scheduler_->Apply(shape, &plan);
    std::vector<std::vector<float>> pooled;
    for (const SeqStep& s : plan.seqs) {
      pooled.push_back({static_cast<float>(pooled.size()), static_cast<float>(s.tokens.size())});
    }
    SampleAndUpdate(scheduler_.get(), LogitsAtFn([](int, int) -> std::span<float> {
                      ADD_FAILURE() << "an embedding sequence was sampled";
                      return {};
                    }),
                    nullptr, [&](int row) { return std::span<const float>(pooled[row]); });
    return plan;
  }
  // The finish events so far: sequence id -> embedding.
  std::vector<std::pair<uint64_t, std::vector<float>>> Finishes() {
    std::vector<std::pair<uint64_t, std::vector<float>>> out;
    for (const OutputEvent& e : scheduler_->mutable_output()->events()) {
      if (e.finished) {
        EXPECT_TRUE(e.finish.status.ok()) << e.finish.status.ToString();
        out.emplace_back(e.sequence_id, e.finish.embedding);
      }
    }
    return out;
  }

  std::unique_ptr<SpmTokenizer> tokenizer_ = MakeByteLevelTokenizer();
  std::unique_ptr<BlockPool> pool_;
  std::unique_ptr<Scheduler> scheduler_;
};

TEST_F(EmbedSchedulingTest, AnEncodersInputsRunWholeAsManyAsAStepHoldsWithNoBlocks) {
  SchedulerOptions o;
  o.encoder = true;
  o.max_step_tokens = 16;
  Build(o);
  const int free = pool_->num_free();
  Add(1, 5, PoolingType::kMean);
  Add(2, 6, PoolingType::kMean);
  Add(3, 7, PoolingType::kMean);
  const StepPlan first = Step();
  ASSERT_EQ(first.seqs.size(), 2u) << "5 + 6 tokens fit 16; the 7 waits, whole";
  for (const SeqStep& s : first.seqs) {
    EXPECT_EQ(s.start_pos, 0);
    EXPECT_TRUE(s.block_table.empty());
    EXPECT_FALSE(s.want_logits);
    EXPECT_EQ(s.embed, PoolingType::kMean);
  }
  EXPECT_EQ(pool_->num_free(), free);
  const StepPlan second = Step();
  ASSERT_EQ(second.seqs.size(), 1u);
  EXPECT_EQ(second.seqs[0].tokens.size(), 7u);
  EXPECT_TRUE(scheduler_->idle());
  const auto finishes = Finishes();
  ASSERT_EQ(finishes.size(), 3u);
  EXPECT_EQ(finishes[0], (std::pair<uint64_t, std::vector<float>>{1, {0, 5}}));
  EXPECT_EQ(finishes[1], (std::pair<uint64_t, std::vector<float>>{2, {1, 6}}));
  EXPECT_EQ(finishes[2], (std::pair<uint64_t, std::vector<float>>{3, {0, 7}}));
}

TEST_F(EmbedSchedulingTest, AnEncoderInputLongerThanAStepIsRefusedNamingTheLimit) {
  SchedulerOptions o;
  o.encoder = true;
  o.max_step_tokens = 8;
  Build(o);
  Add(1, 9, PoolingType::kCls);
  const auto& events = scheduler_->mutable_output()->events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].finish.status.code(), shared::StatusCode::kInvalidArgument);
  EXPECT_NE(events[0].finish.status.message().find("8"), std::string::npos);
  EXPECT_TRUE(scheduler_->idle());
}

TEST_F(EmbedSchedulingTest, ADecodersInputIsPrefilledInChunksAndPooledAtTheLastOne) {
  SchedulerOptions o;
  o.max_step_tokens = 4;
  Build(o);
  Add(7, 10, PoolingType::kLast);
  std::vector<StepPlan> plans;
  for (int i = 0; i < 10 && !scheduler_->idle(); i++) plans.push_back(Step());
  ASSERT_EQ(plans.size(), 3u);
  for (size_t i = 0; i < plans.size(); i++) {
    ASSERT_EQ(plans[i].seqs.size(), 1u);
    EXPECT_EQ(plans[i].seqs[0].embed,
              i + 1 == plans.size() ? PoolingType::kLast : PoolingType::kNone);
    EXPECT_FALSE(plans[i].seqs[0].want_logits);
  }
  EXPECT_EQ(plans[2].seqs[0].start_pos, 8);
  const auto finishes = Finishes();
  ASSERT_EQ(finishes.size(), 1u);
  EXPECT_EQ(finishes[0], (std::pair<uint64_t, std::vector<float>>{7, {0, 2}}));
  EXPECT_EQ(pool_->num_used(), 0) << "the finished input's blocks went back (cached or free)";
}

}  // namespace
}  // namespace smallmind::worker
