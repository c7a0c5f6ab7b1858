// A draft picker restarted from the target's sampler picks, from the same logits, the tokens the
// target's sampler picks at the same positions: the same parameters, penalties over the same
// history plus the drafts before, and the same seeded draw of each position.
#include "worker/sample/draft_picker.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "worker/sample/rng.h"

namespace smallmind::worker {
namespace {

constexpr int kVocab = 300;

// Peaked enough that draws differ between positions, flat enough that they are not all argmax.
std::vector<float> Logits(uint64_t seed, int step) {
  std::vector<float> l(kVocab);
  for (int i = 0; i < kVocab; ++i) {
    l[i] = 4.0f * UniformFloat(seed, static_cast<uint64_t>(step * kVocab + i));
  }
  return l;
}

SamplingParams Sampled() {
  SamplingParams p;
  p.temperature = 0.8f;
  p.top_k = 40;
  p.top_p = 0.95f;
  p.min_p = 0.02f;
  p.repetition_penalty = 1.3f;
  p.presence_penalty = 0.5f;
  p.frequency_penalty = 0.2f;
  p.seed = 99;
  p.logprobs = 3;
  p.logit_bias = {{7, 2.0f}, {11, -1.0f}};
  return p;
}

// The target picks 4 positions at a time; before each group the draft picker restarts from it
// and drafts the group from the same logits.
int AgreementOver(const SamplingParams& params) {
  Sampler target(params, kVocab);
  const std::vector<TokenId> prompt = {3, 5, 7, 9, 11};
  target.AddPromptTokens(prompt);
  DraftPicker draft(params, kVocab);
  int agreed = 0;
  for (int group = 0; group < 20; ++group) {
    draft.Restart(target);
    for (int j = 0; j < 4; ++j) {
      std::vector<float> a = Logits(5, group * 4 + j);
      std::vector<float> b = a;
      const TokenId d = draft.Next(a);
      const TokenId t = target.Sample(b);
      target.Accept(t);
      agreed += d == t ? 1 : 0;
    }
  }
  return agreed;
}

TEST(DraftPickerTest, RestartedFromTheTargetItPicksTheTargetsTokens) {
  EXPECT_EQ(AgreementOver(Sampled()), 80);
  SamplingParams greedy = Sampled();
  greedy.temperature = 0.0f;
  EXPECT_EQ(AgreementOver(greedy), 80);
  SamplingParams plain;
  plain.seed = 4;
  EXPECT_EQ(AgreementOver(plain), 80);
}

// A draft picker whose history is one position behind the target's (the target picked a token it
// never saw) draws with the wrong index and penalties: the same logits then give other tokens.
// Restart is what keeps them in step.
TEST(DraftPickerTest, WithoutARestartItsDrawsDriftFromTheTargets) {
  SamplingParams p = Sampled();
  Sampler target(p, kVocab);
  DraftPicker draft(p, kVocab);
  draft.Restart(target);
  std::vector<float> skip = Logits(6, 0);
  target.Accept(target.Sample(skip));
  int agreed = 0;
  for (int i = 1; i <= 40; ++i) {
    std::vector<float> a = Logits(6, i);
    std::vector<float> b = a;
    const TokenId d = draft.Next(a);
    const TokenId t = target.Sample(b);
    target.Accept(t);
    agreed += d == t ? 1 : 0;
  }
  EXPECT_LT(agreed, 30);
}

}  // namespace
}  // namespace smallmind::worker
