// Sliding-window models with the real scheduler and engine: when every layer is windowed a
// sequence holds only the blocks its window can see (a pool too small for its whole context
// serves it without preemption) and its logits are bitwise those of a run that keeps every block;
// the prefix cache still serves a repeated prompt with the same bits; with some layers global
// (gemma-style) every block is kept.
#include <gtest/gtest.h>

#include <vector>

#include "tests/worker/engine/step_driver.h"
#include "worker/modelgen/builtin_tiny.h"

namespace smallmind::worker {
namespace {

using kernels::ExecMode;
using testing::StepDriver;
using testing::StepDriverOptions;

constexpr int kBlockSize = 8;
constexpr int kWindow = 12;

LlamaModel WindowedModel(int swa_period) {
  LlamaModel m = MakeBuiltinTinyModel();
  m.config.sliding_window = kWindow;
  m.config.swa_period = swa_period;
  return m;
}

std::vector<TokenId> Prompt(int n, int salt) {
  std::vector<TokenId> ids;
  for (int i = 0; i < n; i++) ids.push_back(3 + (i * 37 + salt) % 200);
  return ids;
}

SequenceRequest Request(const std::vector<TokenId>& prompt, int max_new) {
  SequenceRequest req;
  req.prompt = prompt;
  req.mode = ExecMode::kDeterministic;
  req.sampling.temperature = 0;
  req.stopping.max_new_tokens = max_new;
  req.stopping.ignore_eos = true;
  return req;
}

StepDriverOptions Options(int num_blocks, bool release, bool cache) {
  StepDriverOptions o;
  o.num_blocks = num_blocks;
  o.block_size = kBlockSize;
  o.threads = 2;
  o.max_step_tokens = 16;  // the prompt in chunks
  o.release_behind_window = release;
  o.prefix_cache.enabled = cache;
  return o;
}

TEST(SlidingWindowEngineTest, EveryLayerWindowedHoldsOnlyTheWindowsBlocksWithTheSameBits) {
  const LlamaModel m = WindowedModel(/*swa_period=*/0);
  ASSERT_EQ(m.config.AllLayersWindow(), kWindow);
  const std::vector<TokenId> prompt = Prompt(40, 1);
  constexpr int kNew = 30;  // 70 positions: 9 blocks

  StepDriver keep(m, Options(16, /*release=*/false, /*cache=*/false));
  keep.Add(1, Request(prompt, kNew));
  keep.RunToIdle();
  ASSERT_EQ(keep.logits(1).size(), size_t{kNew});

  // The window (12 positions) spans at most 3 blocks, the next block and the one a chain needs:
  // 5 blocks serve the whole sequence.
  StepDriver slim(m, Options(5, /*release=*/true, /*cache=*/false));
  slim.Add(1, Request(prompt, kNew));
  int max_used = 0;
  while (slim.Step()) max_used = std::max(max_used, slim.blocks().num_used());
  EXPECT_EQ(slim.preemptions(), 0);
  EXPECT_LE(max_used, 5);
  EXPECT_EQ(slim.stream(1).ids, keep.stream(1).ids);
  EXPECT_EQ(slim.logits(1), keep.logits(1));
  EXPECT_EQ(slim.blocks().num_used(), 0) << "a finished sequence leaves nothing referenced";
}

TEST(SlidingWindowEngineTest, PrefixCacheServesARepeatedPromptWithTheSameBits) {
  const LlamaModel m = WindowedModel(/*swa_period=*/0);
  const std::vector<TokenId> prompt = Prompt(45, 2);
  StepDriver d(m, Options(32, /*release=*/true, /*cache=*/true));
  d.Add(1, Request(prompt, 6));
  d.RunToIdle();
  d.Add(2, Request(prompt, 6));
  d.RunToIdle();
  EXPECT_GT(d.scheduler().prefix_cache().counters().hit_blocks, 0u);
  EXPECT_EQ(d.stream(2).ids, d.stream(1).ids);
  EXPECT_EQ(d.logits(2), d.logits(1));
}

TEST(SlidingWindowEngineTest, GlobalLayersKeepEveryBlock) {
  const LlamaModel m = WindowedModel(/*swa_period=*/2);  // layer 1 is global
  ASSERT_EQ(m.config.AllLayersWindow(), 0);
  StepDriver d(m, Options(16, /*release=*/true, /*cache=*/false));
  d.Add(1, Request(Prompt(40, 3), 30));
  int max_used = 0;
  while (d.Step()) max_used = std::max(max_used, d.blocks().num_used());
  EXPECT_EQ(max_used, 9);  // 70 positions
}

}  // namespace
}  // namespace smallmind::worker
