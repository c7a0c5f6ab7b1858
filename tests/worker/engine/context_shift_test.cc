// Context shift (stopping.context_overflow = SHIFT) with the real engine: a request goes on past
// the model's context, keeping its first n_keep tokens and the newest half of the rest; the kept
// window's K/V are recomputed, so the logits after a shift are bitwise those of a fresh prompt of
// the kept tokens, deterministic requests stay bitwise equal to their solo run whatever the batch,
// threads, chunking and preemption around them, and the prefix cache serves both the kept leading
// blocks and the blocks the shift released.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

#include "tests/worker/engine/step_driver.h"
#include "tests/worker/engine/test_models.h"

namespace smallmind::worker {
namespace {

using testing::StepDriver;
using testing::StepDriverOptions;

constexpr int kContext = 48;

const LlamaModel& SmallContextModel() {
  static const LlamaModel model = [] {
    testing::RandomModelSpec spec;
    spec.config = testing::SmallConfig();
    spec.config.context_length = kContext;
    spec.seed = 7;
    return testing::MakeRandomModel(spec);
  }();
  return model;
}

// Ids in [1, 300], inside SmallConfig's vocabulary of 320.
std::vector<TokenId> Prompt(int n, uint64_t salt) {
  std::vector<TokenId> ids;
  for (int i = 0; i < n; ++i) ids.push_back(1 + static_cast<TokenId>((i * 37 + salt * 101) % 300));
  return ids;
}

SequenceRequest Request(std::vector<TokenId> prompt, int max_new, bool shift, int n_keep) {
  SequenceRequest req;
  req.prompt = std::move(prompt);
  req.mode = kernels::ExecMode::kDeterministic;
  req.sampling.temperature = 0;
  req.stopping.max_new_tokens = max_new;
  req.stopping.eos_id = -1;  // random models end at random otherwise
  req.overflow.shift = shift;
  req.overflow.n_keep = n_keep;
  req.overflow.context_length = kContext;
  return req;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(ContextShiftTest, KeepsNKeepAndTheNewestHalfAndTheNextLogitsAreThoseOfTheKeptWindow) {
  const std::vector<TokenId> prompt = Prompt(20, 1);
  StepDriverOptions o;
  o.threads = 2;
  StepDriver d(SmallContextModel(), o);
  d.Add(1, Request(prompt, 70, /*shift=*/true, /*n_keep=*/4));
  d.RunToIdle();
  const testing::RecordedStream& s = d.stream(1);
  ASSERT_EQ(s.finish.reason, FinishReason::kLength);
  ASSERT_EQ(s.ids.size(), 70u) << "generation goes on past the 48-position context";
  // The 29th token needs position 48: the window (49 tokens) keeps 4 and the newest
  // 49 - 4 - (49 - 4) / 2 = 23, so it is back at 27 and shifts again 22 tokens later.
  EXPECT_EQ(s.shifted_after, (std::vector<int>{29, 51}));
  EXPECT_EQ(s.finish.context_shifts, 2);
  EXPECT_EQ(s.finish.completion_tokens, 70);
  EXPECT_EQ(d.blocks().num_used(), 0) << "a shifted sequence frees its blocks when it finishes";

  // The window after the first shift, as a fresh prompt: its next token and bitwise its logits
  // are what the shifted sequence drew its 30th token from.
  std::vector<TokenId> all = prompt;
  all.insert(all.end(), s.ids.begin(), s.ids.end());
  std::vector<TokenId> window(all.begin(), all.begin() + 4);
  window.insert(window.end(), all.begin() + 4 + 22, all.begin() + 49);
  ASSERT_EQ(window.size(), 27u);
  StepDriver fresh(SmallContextModel(), o);
  fresh.Add(2, Request(window, 1, /*shift=*/false, 0));
  fresh.RunToIdle();
  ASSERT_EQ(fresh.stream(2).ids.size(), 1u);
  EXPECT_EQ(fresh.stream(2).ids[0], s.ids[29]);
  ASSERT_EQ(d.logits(1).size(), 70u);
  EXPECT_TRUE(SameBits(fresh.logits(2)[0], d.logits(1)[29]))
      << "the kept window's K/V are recomputed at their new positions";
}

TEST(ContextShiftTest, FinishStopsAtTheContextWhereShiftGoesOn) {
  StepDriver d(SmallContextModel(), {});
  // FINISH: the worker caps max_new_tokens by the room left (request_builder); the scheduler
  // never needs a position past the context.
  d.Add(1, Request(Prompt(20, 2), kContext - 20, /*shift=*/false, 0));
  d.RunToIdle();
  EXPECT_EQ(d.stream(1).ids.size(), static_cast<size_t>(kContext - 20));
  EXPECT_TRUE(d.stream(1).shifted_after.empty());
  EXPECT_EQ(d.stream(1).finish.context_shifts, 0);
}

struct Scripted {
  uint64_t id;
  int prompt_tokens;
  int max_new;
  bool shift;
  int n_keep;
  float temperature;  // 0: greedy; else seeded draws
  int arrive_step;    // submitted before this step of the batched run
  int cancel_step;    // cancelled before this step (-1: runs to the end)
};

// Four shifting requests with different n_keep (none, BOS-like, a few, two blocks' worth) beside
// one that finishes at the context; arrivals mid-prefill and mid-decode, one cancelled after its
// first shift.
const std::vector<Scripted>& Script() {
  static const std::vector<Scripted> script = {
      {1, 12, 80, true, 0, 0.0f, 0, -1},   {2, 30, 70, true, 1, 0.9f, 0, -1},
      {3, 20, 18, false, 0, 0.7f, 3, -1},  {4, 25, 90, true, 16, 0.8f, 6, -1},
      {5, 9, 100, true, 5, 1.0f, 10, 110},
  };
  return script;
}

SequenceRequest ScriptedRequest(const Scripted& s) {
  SequenceRequest req = Request(Prompt(s.prompt_tokens, s.id), s.max_new, s.shift, s.n_keep);
  req.sampling.temperature = s.temperature;
  req.sampling.seed = 500 + s.id;
  req.sampling.repetition_penalty = s.id % 2 == 0 ? 1.1f : 1.0f;
  return req;
}

TEST(ContextShiftTest, ShiftedDeterministicRequestsEqualTheirSoloOutputInABusyBatch) {
  // Solo: each request alone, one thread, whole-window prefill, no prefix cache.
  std::map<uint64_t, testing::RecordedStream> solo;
  std::map<uint64_t, std::vector<std::vector<float>>> solo_logits;
  for (const Scripted& s : Script()) {
    StepDriverOptions o;
    o.threads = 1;
    o.prefix_cache.enabled = false;
    StepDriver d(SmallContextModel(), o);
    d.Add(s.id, ScriptedRequest(s));
    d.RunToIdle();
    ASSERT_EQ(d.stream(s.id).finish.reason, FinishReason::kLength);
    solo[s.id] = d.stream(s.id);
    solo_logits[s.id] = d.logits(s.id);
    if (s.shift) {
      ASSERT_GE(solo[s.id].shifted_after.size(), 2u) << "sequence " << s.id;
    }
  }

  // Batched: three threads, 16-token steps, a pool of 18 blocks (room for about three full
  // contexts: recomputing shifted windows preempts others), the prefix cache on.
  StepDriverOptions o;
  o.threads = 3;
  o.max_step_tokens = 16;
  o.num_blocks = 18;
  StepDriver batch(SmallContextModel(), o);
  for (int step = 0; step < 2000; ++step) {
    for (const Scripted& s : Script()) {
      if (s.arrive_step == step) batch.Add(s.id, ScriptedRequest(s));
      if (s.cancel_step == step) batch.Cancel(s.id);
    }
    if (!batch.Step() && step > Script().back().cancel_step) break;
  }
  EXPECT_GE(batch.max_batch(), 4) << "the script must actually batch requests";
  EXPECT_GT(batch.preemptions(), 0) << "the script must exercise preemption around shifts";
  EXPECT_EQ(batch.blocks().num_used(), 0);

  for (const Scripted& s : Script()) {
    const testing::RecordedStream& got = batch.stream(s.id);
    const testing::RecordedStream& want = solo[s.id];
    EXPECT_EQ(got.finishes, 1) << "sequence " << s.id;
    const size_t n = got.ids.size();
    if (s.cancel_step < 0) {
      EXPECT_EQ(got.finish.reason, FinishReason::kLength) << "sequence " << s.id;
      EXPECT_EQ(got.ids, want.ids) << "sequence " << s.id;
      EXPECT_EQ(got.shifted_after, want.shifted_after) << "sequence " << s.id;
      EXPECT_EQ(got.finish.context_shifts, want.finish.context_shifts);
    } else {
      EXPECT_EQ(got.finish.reason, FinishReason::kCancelled) << "sequence " << s.id;
      ASSERT_LT(n, want.ids.size()) << "sequence " << s.id << " finished before its cancel";
      ASSERT_GE(got.shifted_after.size(), 1u) << "sequence " << s.id << " cancelled too early";
      EXPECT_EQ(got.ids, std::vector<TokenId>(want.ids.begin(), want.ids.begin() + n));
    }
    ASSERT_GE(batch.logits(s.id).size(), n);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_TRUE(SameBits(batch.logits(s.id)[i], solo_logits[s.id][i]))
          << "sequence " << s.id << ": logits of token " << i << " differ from its solo run";
    }
  }
}

TEST(ContextShiftTest, PrefixCacheServesTheKeptBlocksAndKeepsTheReleasedOnesValid) {
  // n_keep 16 = two full blocks of 8: every recomputation of the window finds them cached.
  const std::vector<TokenId> prompt = Prompt(25, 3);
  StepDriverOptions cached;
  StepDriver d(SmallContextModel(), cached);
  d.Add(1, Request(prompt, 60, /*shift=*/true, /*n_keep=*/16));
  d.RunToIdle();
  const testing::RecordedStream& s = d.stream(1);
  ASSERT_EQ(s.ids.size(), 60u);
  ASSERT_GE(s.shifted_after.size(), 2u);
  const PrefixCacheCounters after_first = d.scheduler().prefix_cache().counters();
  // At least: a window whose newer tokens repeat the same tokens at the same positions hits more.
  EXPECT_GE(after_first.hit_blocks, 2 * s.shifted_after.size())
      << "each shift recomputes the window but reuses its two kept blocks";
  EXPECT_EQ(s.finish.cached_prompt_tokens, 0) << "usage counts reuse at admission only";

  StepDriverOptions uncached;
  uncached.prefix_cache.enabled = false;
  StepDriver plain(SmallContextModel(), uncached);
  plain.Add(1, Request(prompt, 60, /*shift=*/true, /*n_keep=*/16));
  plain.RunToIdle();
  EXPECT_EQ(plain.stream(1).ids, s.ids);
  for (size_t i = 0; i < s.ids.size(); ++i) {
    ASSERT_TRUE(SameBits(plain.logits(1)[i], d.logits(1)[i])) << "token " << i;
  }

  // The prompt's third block (positions 16-23) was released by the first shift, under the hash of
  // the tokens and positions it was computed at: a new request with the same prompt reuses all
  // three full blocks and draws its first token from the same logits.
  d.Add(2, Request(prompt, 1, /*shift=*/false, 0));
  d.RunToIdle();
  EXPECT_EQ(d.stream(2).finish.cached_prompt_tokens, 24);
  ASSERT_EQ(d.logits(2).size(), 1u);
  EXPECT_TRUE(SameBits(d.logits(2)[0], d.logits(1)[0]));
}

}  // namespace
}  // namespace smallmind::worker
