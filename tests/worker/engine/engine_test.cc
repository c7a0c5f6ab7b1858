#include "worker/engine/engine.h"

#include <gtest/gtest.h>

#include <vector>

#include "worker/modelgen/builtin_tiny.h"

namespace smallmind::worker {
namespace {

constexpr int kBlockSize = 8;

// Token ids 3..258 (the byte tokens of the tiny vocabulary) from a fixed formula.
std::vector<TokenId> Prompt(int n, int salt) {
  std::vector<TokenId> ids;
  for (int i = 0; i < n; i++) ids.push_back(3 + (i * 37 + salt * 11) % 256);
  return ids;
}

std::vector<int32_t> Blocks(int first, int n, int stride) {
  std::vector<int32_t> table;
  for (int i = 0; i < n; i++) table.push_back(first + i * stride);
  return table;
}

std::vector<float> Copy(std::span<const float> s) { return std::vector<float>(s.begin(), s.end()); }

class EngineTest : public ::testing::Test {
 protected:
  EngineTest()
      : model_(MakeBuiltinTinyModel()),
        pool_(model_.config, 32, kBlockSize),
        engine_(model_.config, model_.weights, &pool_, EngineOptions{64, 4}) {}

  // Feeds `prompt` in chunks of `chunk` tokens; returns the logits of its last token.
  std::vector<float> Prefill(const std::vector<TokenId>& prompt, int chunk,
                             const std::vector<int32_t>& blocks) {
    const int n = static_cast<int>(prompt.size());
    for (int pos = 0; pos < n; pos += chunk) {
      const int len = std::min(chunk, n - pos);
      StepPlan plan;
      plan.seqs.push_back(
          SeqStep{std::span<const TokenId>(prompt).subspan(pos, len), pos, blocks, pos + len == n});
      engine_.Step(plan);
    }
    return Copy(engine_.Logits(0));
  }

  LlamaModel model_;
  KvPool pool_;
  Engine engine_;
};

TEST_F(EngineTest, ChunkedPrefillGivesBitwiseTheSameLogitsAsTokenByToken) {
  const std::vector<TokenId> prompt = Prompt(21, 1);
  const std::vector<int32_t> blocks = Blocks(0, 3, 1);
  const std::vector<float> one_by_one = Prefill(prompt, 1, blocks);
  EXPECT_EQ(Prefill(prompt, 21, Blocks(31, 3, -1)), one_by_one);
  EXPECT_EQ(Prefill(prompt, 8, Blocks(10, 3, 5)), one_by_one);
  EXPECT_EQ(Prefill(prompt, 5, blocks), one_by_one);
}

TEST_F(EngineTest, BatchedSequencesGetBitwiseTheSameLogitsAsAlone) {
  const std::vector<TokenId> a = Prompt(12, 2), b = Prompt(30, 3);
  const std::vector<int32_t> blocks_a = Blocks(0, 2, 1), blocks_b = Blocks(20, 4, 1);
  const std::vector<float> alone_a = Prefill(a, 12, blocks_a);
  const std::vector<float> alone_b = Prefill(b, 30, blocks_b);

  // b's first 20 tokens, then b's last 10 beside all of a, then one more decode token for each.
  Prefill(std::vector<TokenId>(b.begin(), b.begin() + 20), 20, blocks_b);
  StepPlan plan;
  plan.seqs.push_back(SeqStep{std::span<const TokenId>(b).subspan(20), 20, blocks_b, true});
  plan.seqs.push_back(SeqStep{a, 0, blocks_a, true});
  engine_.Step(plan);
  EXPECT_EQ(Copy(engine_.Logits(0)), alone_b);
  EXPECT_EQ(Copy(engine_.Logits(1)), alone_a);
}

TEST_F(EngineTest, OnlyComputesLogitsForSequencesThatAskAndKeepsTheirOrder) {
  const std::vector<TokenId> a = Prompt(4, 4), b = Prompt(6, 5);
  const std::vector<int32_t> blocks_a = Blocks(0, 1, 1), blocks_b = Blocks(1, 1, 1);
  const std::vector<float> alone_b = Prefill(b, 6, blocks_b);
  StepPlan plan;
  plan.seqs.push_back(SeqStep{a, 0, blocks_a, false});
  plan.seqs.push_back(SeqStep{b, 0, blocks_b, true});
  engine_.Step(plan);
  EXPECT_EQ(Copy(engine_.Logits(1)), alone_b);
  EXPECT_DEATH(engine_.Logits(0), "did not ask for logits");
  EXPECT_DEATH(engine_.Logits(2), "not in the last step");
}

TEST_F(EngineTest, DecodeLogitsDependOnTheCachedPrefix) {
  // The same last token after different prefixes must give different logits, or the cache is
  // unused.
  const std::vector<TokenId> p1 = {1, 50, 60, 70}, p2 = {1, 90, 80, 70};
  EXPECT_NE(Prefill(p1, 4, Blocks(0, 1, 1)), Prefill(p2, 4, Blocks(1, 1, 1)));
}

TEST_F(EngineTest, AbortsOnAPlanBeyondItsLimits) {
  const std::vector<TokenId> long_prompt = Prompt(65, 6);
  const std::vector<int32_t> blocks = Blocks(0, 9, 1);
  StepPlan too_many_tokens;
  too_many_tokens.seqs.push_back(SeqStep{long_prompt, 0, blocks, true});
  EXPECT_DEATH(engine_.Step(too_many_tokens), "65 tokens in a step, limit 64");

  const std::vector<TokenId> prompt = Prompt(9, 7);
  StepPlan short_table;
  short_table.seqs.push_back(SeqStep{prompt, 0, Blocks(0, 1, 1), true});
  EXPECT_DEATH(engine_.Step(short_table), "does not cover 9 positions");

  const std::vector<TokenId> bad_id = {259};
  StepPlan bad_token;
  bad_token.seqs.push_back(SeqStep{bad_id, 0, blocks, true});
  EXPECT_DEATH(engine_.Step(bad_token), "token id 259 out of range");

  const std::vector<TokenId> one = {5};
  const std::vector<int32_t> past_context = Blocks(0, 64, 0);
  StepPlan beyond;
  beyond.seqs.push_back(SeqStep{one, 512, past_context, true});
  EXPECT_DEATH(engine_.Step(beyond), "exceed the context of 512");
}

}  // namespace
}  // namespace smallmind::worker
