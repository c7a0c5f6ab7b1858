// Continuous batching on the deterministic path with the real engine: requests that arrive while
// others are mid-prefill or mid-decode, and requests cancelled while others go on, each give
// exactly their solo output: the same tokens and bitwise the same logits at every step, whatever
// joined or left the batch around them, the thread count and how their prompts were chunked.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tests/worker/engine/step_driver.h"
#include "tests/worker/engine/test_models.h"
#include "worker/modelgen/builtin_tiny.h"

namespace smallmind::worker {
namespace {

using testing::StepDriver;
using testing::StepDriverOptions;

struct Scripted {
  uint64_t id;
  int prompt_tokens;
  int max_new;
  float temperature;  // 0: greedy; else seeded draws
  int arrive_step;    // submitted before this step of the batched run
  int cancel_step;    // cancelled before this step (-1: runs to the end)
};

// Six requests: two at the start, the rest arriving while others prefill or decode; two cancelled
// mid-stream (one while the batch is full, one after others have already finished).
const std::vector<Scripted>& Script() {
  static const std::vector<Scripted> script = {
      {1, 23, 30, 0.0f, 0, -1}, {2, 5, 40, 0.9f, 0, 9},   {3, 41, 18, 0.7f, 2, -1},
      {4, 9, 26, 0.0f, 5, -1},  {5, 30, 36, 1.0f, 6, 21}, {6, 17, 12, 0.8f, 14, -1},
  };
  return script;
}

SequenceRequest Request(const Scripted& s, int vocab) {
  SequenceRequest req;
  for (int i = 0; i < s.prompt_tokens; ++i) {
    req.prompt.push_back(1 + static_cast<TokenId>((i * 53 + s.id * 97) % (vocab - 1)));
  }
  req.mode = kernels::ExecMode::kDeterministic;
  req.sampling.temperature = s.temperature;
  req.sampling.seed = 1000 + s.id;
  req.sampling.repetition_penalty = s.id % 2 == 0 ? 1.1f : 1.0f;
  req.stopping.max_new_tokens = s.max_new;
  req.stopping.eos_id = -1;  // random models end at random otherwise
  return req;
}

void ExpectSameLogits(const std::vector<std::vector<float>>& got,
                      const std::vector<std::vector<float>>& want, size_t n, uint64_t id) {
  ASSERT_GE(got.size(), n);
  ASSERT_GE(want.size(), n);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(got[i].size(), want[i].size());
    ASSERT_EQ(0, std::memcmp(got[i].data(), want[i].data(), got[i].size() * sizeof(float)))
        << "sequence " << id << ": logits of token " << i << " differ from its solo run";
  }
}

void ExpectJoinsAndLeavesKeepSoloOutputs(const LlamaModel& model) {
  const int vocab = model.config.vocab_size;
  // Solo: each request alone, one thread, whole-prompt prefill.
  std::map<uint64_t, std::vector<TokenId>> solo_ids;
  std::map<uint64_t, std::vector<std::vector<float>>> solo_logits;
  for (const Scripted& s : Script()) {
    StepDriverOptions o;
    o.threads = 1;
    o.max_step_tokens = 64;
    StepDriver solo(model, o);
    solo.Add(s.id, Request(s, vocab));
    solo.RunToIdle();
    ASSERT_EQ(solo.stream(s.id).finish.reason, FinishReason::kLength);
    solo_ids[s.id] = solo.stream(s.id).ids;
    solo_logits[s.id] = solo.logits(s.id);
    ASSERT_EQ(solo_logits[s.id].size(), static_cast<size_t>(s.max_new));
  }

  // Batched: three threads, a 16-token step budget (prompts prefill in chunks beside decodes),
  // arrivals and cancellations at scripted steps.
  StepDriverOptions o;
  o.threads = 3;
  o.max_step_tokens = 16;
  StepDriver batch(model, o);
  bool joined_mid_batch = false;
  for (int step = 0; step < 1000; ++step) {
    for (const Scripted& s : Script()) {
      if (s.arrive_step == step) {
        joined_mid_batch |= batch.scheduler().idle() == false;
        batch.Add(s.id, Request(s, vocab));
      }
      if (s.cancel_step == step) batch.Cancel(s.id);
    }
    if (!batch.Step() && step > Script().back().arrive_step) break;
  }
  EXPECT_TRUE(joined_mid_batch);
  EXPECT_GE(batch.max_batch(), 4) << "the script must actually batch requests";
  EXPECT_EQ(batch.blocks().num_used(), 0) << "finished and cancelled sequences free their blocks";

  for (const Scripted& s : Script()) {
    const testing::RecordedStream& got = batch.stream(s.id);
    EXPECT_EQ(got.finishes, 1) << "sequence " << s.id;
    EXPECT_EQ(got.events_after_finish, 0) << "sequence " << s.id;
    const std::vector<TokenId>& want = solo_ids[s.id];
    if (s.cancel_step < 0) {
      EXPECT_EQ(got.finish.reason, FinishReason::kLength) << "sequence " << s.id;
      EXPECT_EQ(got.ids, want) << "sequence " << s.id;
      ExpectSameLogits(batch.logits(s.id), solo_logits[s.id], want.size(), s.id);
    } else {
      EXPECT_EQ(got.finish.reason, FinishReason::kCancelled) << "sequence " << s.id;
      // It streamed something, but not everything, and what it streamed is its solo output.
      ASSERT_GT(got.ids.size(), 0u) << "sequence " << s.id << " was cancelled before a token";
      ASSERT_LT(got.ids.size(), want.size()) << "sequence " << s.id << " finished before cancel";
      EXPECT_EQ(got.ids, std::vector<TokenId>(want.begin(), want.begin() + got.ids.size()));
      ExpectSameLogits(batch.logits(s.id), solo_logits[s.id], got.ids.size(), s.id);
    }
  }
}

TEST(ContinuousBatchingTest, RequestsJoiningAndLeavingMidBatchEachEqualTheirSoloOutput) {
  ExpectJoinsAndLeavesKeepSoloOutputs(MakeBuiltinTinyModel());
}

TEST(ContinuousBatchingTest, JoiningAndLeavingKeepSoloOutputsOnAQuantizedModelToo) {
  testing::RandomModelSpec spec;
  spec.config = testing::SmallConfig();
  spec.matrix_type = kernels::DType::kQ8_0;
  ExpectJoinsAndLeavesKeepSoloOutputs(testing::MakeRandomModel(spec));
}

}  // namespace
}  // namespace smallmind::worker
