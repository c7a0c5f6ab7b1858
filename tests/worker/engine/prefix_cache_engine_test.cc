// The prefix cache with the real engine and scheduler: a deterministic request gives bitwise the
// same logits and tokens whether its prefix comes from the cache or is computed, also when the
// cached blocks were written by parallel steps (when both paths write the same K/V bits, which this
// file checks too); a pool too small for every request completes them all through preemption with
// the cache on; the hit and utilisation counters.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "shared/worker_stat_table.h"
#include "tests/worker/engine/test_models.h"
#include "tests/worker/sched/stream_recorder.h"
#include "worker/engine/engine.h"
#include "worker/engine/kv_producer.h"
#include "worker/kv/kv_pool.h"
#include "worker/modelgen/builtin_tiny.h"
#include "worker/sched/output_queue.h"
#include "worker/sched/scheduler.h"
#include "worker/tokenizer/spm_tokenizer.h"

namespace smallmind::worker {
namespace {

using kernels::ExecMode;
using testing::RecordedStream;
using testing::StreamRecorder;

constexpr int kBlockSize = 8;

// A scheduler and engine over one KV pool, driven step by step as EngineLoop does, keeping the
// logits of every step whose plan has a single sequence (the tests run their target alone).
class Harness {
 public:
  Harness(const LlamaModel& model, int num_blocks, int threads = 2, int max_step_tokens = 64)
      : model_(model) {
    kv_ = std::make_unique<KvPool>(model.config, num_blocks, kBlockSize);
    blocks_ = std::make_unique<BlockPool>(num_blocks, kBlockSize);
    EngineOptions eo;
    eo.max_step_tokens = max_step_tokens;
    eo.max_seqs = 8;
    eo.num_threads = threads;
    eo.parallel_threshold = 1;
    engine_ = std::make_unique<Engine>(model.config, model.weights, kv_.get(), eo);
    SchedulerOptions so;
    so.max_step_tokens = max_step_tokens;
    so.max_seqs = 8;
    so.prefix_cache = WithChainRoots(so.prefix_cache, *engine_, /*model_fingerprint=*/42);
    scheduler_ = std::make_unique<Scheduler>(so, blocks_.get(), kBlockSize);
  }
  ~Harness() { scheduler_->CancelAll(); }

  void Submit(uint64_t id, const std::vector<TokenId>& prompt, ExecMode mode, int max_new = 6) {
    SequenceRequest req;
    req.prompt = prompt;
    req.mode = mode;
    req.sampling.temperature = 0.9f;  // sampled, seeded: equal logits must give equal draws
    req.sampling.seed = 7;
    req.stopping.max_new_tokens = max_new;
    req.stopping.eos_id = -1;
    scheduler_->Add(std::make_unique<Sequence>(id, std::move(req), *tokenizer_,
                                               model_.config.vocab_size, nullptr));
  }

  // Steps until idle (bounded).
  void Run() {
    logits_.clear();
    for (int steps = 0; steps < 10000; ++steps) {
      while (!scheduler_->Schedule(&shape_)) {
        scheduler_->PreemptNewest();
        ++preemptions_;
      }
      if (shape_.entries.empty()) break;
      scheduler_->Apply(shape_, &plan_);
      engine_->Step(plan_);
      const bool alone = plan_.seqs.size() == 1;
      SampleAndUpdate(scheduler_.get(), [&](int i) {
        std::span<float> l = engine_->Logits(i);
        if (alone) logits_.emplace_back(l.begin(), l.end());
        return l;
      });
      outputs_.Publish(scheduler_->mutable_output());
      recorder_.Drain(&outputs_);
    }
  }

  const RecordedStream& stream(uint64_t id) { return recorder_[id]; }
  const std::vector<std::vector<float>>& logits() const { return logits_; }
  const Engine& engine() const { return *engine_; }
  const BlockPool& blocks() const { return *blocks_; }
  const Scheduler& scheduler() const { return *scheduler_; }
  int preemptions() const { return preemptions_; }

 private:
  const LlamaModel& model_;
  std::unique_ptr<SpmTokenizer> tokenizer_ = MakeByteLevelTokenizer();
  std::unique_ptr<KvPool> kv_;
  std::unique_ptr<BlockPool> blocks_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Scheduler> scheduler_;
  OutputQueue outputs_;
  StreamRecorder recorder_;
  StepShape shape_;
  StepPlan plan_;
  std::vector<std::vector<float>> logits_;
  int preemptions_ = 0;
};

std::vector<TokenId> Prompt(int seed, int n, int vocab) {
  std::vector<TokenId> p;
  for (int i = 0; i < n; ++i) p.push_back(1 + (i * 37 + seed * 101) % (vocab - 1));
  return p;
}

std::vector<TokenId> Join(std::vector<TokenId> a, const std::vector<TokenId>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

struct Outcome {
  std::vector<std::vector<float>> logits;
  std::vector<TokenId> tokens;
  int cached_prompt_tokens = 0;
};

// `target` alone in a fresh pool, or after `writer` (run to the end first, on `writer_mode`) left
// its blocks in the cache.
Outcome RunTarget(const LlamaModel& m, const std::vector<TokenId>& target,
                  const std::vector<TokenId>* writer, ExecMode writer_mode, int threads) {
  Harness h(m, 64, threads);
  if (writer != nullptr) {
    h.Submit(1, *writer, writer_mode);
    h.Run();
  }
  h.Submit(2, target, ExecMode::kDeterministic);
  h.Run();
  EXPECT_EQ(h.stream(2).finish.reason, FinishReason::kLength);
  return {h.logits(), h.stream(2).ids, h.stream(2).finish.cached_prompt_tokens};
}

void ExpectHitIsBitwiseTheSame(const LlamaModel& m, ExecMode writer_mode) {
  const int vocab = m.config.vocab_size;
  const std::vector<TokenId> shared = Prompt(1, 37, vocab);  // 4 full blocks + 5 tokens
  const std::vector<TokenId> target = Join(shared, Prompt(2, 6, vocab));
  const std::vector<TokenId> writer = Join(shared, Prompt(3, 9, vocab));
  const Outcome solo = RunTarget(m, target, nullptr, writer_mode, 1);
  ASSERT_EQ(solo.cached_prompt_tokens, 0);
  ASSERT_EQ(solo.logits.size(), 6u);  // the prompt's last position, then 5 decodes
  for (int threads : {1, 3}) {
    const Outcome hit = RunTarget(m, target, &writer, writer_mode, threads);
    EXPECT_EQ(hit.cached_prompt_tokens, 32) << "the 4 shared full blocks";
    EXPECT_EQ(hit.tokens, solo.tokens) << threads << " threads";
    ASSERT_EQ(hit.logits.size(), solo.logits.size());
    for (size_t i = 0; i < hit.logits.size(); ++i) {
      ASSERT_EQ(0, std::memcmp(hit.logits[i].data(), solo.logits[i].data(),
                               hit.logits[i].size() * sizeof(float)))
          << "logits of step " << i << " differ with a prefix hit, " << threads << " threads";
    }
  }
}

TEST(PrefixCacheEngineTest, ADeterministicRequestGivesBitwiseTheSameLogitsAndTokensWithAHit) {
  const LlamaModel tiny = MakeBuiltinTinyModel();
  ExpectHitIsBitwiseTheSame(tiny, ExecMode::kDeterministic);
  testing::RandomModelSpec spec;
  spec.config = testing::SmallConfig();
  spec.matrix_type = kernels::DType::kQ8_0;
  const LlamaModel q8 = testing::MakeRandomModel(spec);
  ExpectHitIsBitwiseTheSame(q8, ExecMode::kDeterministic);
}

// K/V rows of `prompt` written by one step on `mode` with `threads` threads.
std::vector<float> KvWrittenBy(const LlamaModel& m, const std::vector<TokenId>& prompt,
                               ExecMode mode, int threads) {
  const int blocks = (static_cast<int>(prompt.size()) + kBlockSize - 1) / kBlockSize;
  KvPool kv(m.config, blocks, kBlockSize);
  EngineOptions eo;
  eo.max_step_tokens = 64;
  eo.num_threads = threads;
  eo.parallel_threshold = 1;
  Engine engine(m.config, m.weights, &kv, eo);
  std::vector<int32_t> table;
  for (int b = 0; b < blocks; ++b) table.push_back(b);
  StepPlan plan;
  plan.mode = mode;
  plan.seqs.push_back(SeqStep{prompt, 0, table, true});
  engine.Step(plan);
  const auto* p = static_cast<const float*>(kv.KRow(0, 0, 0));
  return std::vector<float>(p, p + kv.bytes() / sizeof(float));
}

TEST(PrefixCacheEngineTest, BothPathsWriteBitwiseTheSameKvWhenTheEngineSaysSo) {
  testing::RandomModelSpec spec;
  spec.config = testing::SmallConfig();
  for (kernels::DType type : {kernels::DType::kF32, kernels::DType::kQ8_0, kernels::DType::kQ4_0}) {
    spec.matrix_type = type;
    const LlamaModel m = testing::MakeRandomModel(spec);
    const std::vector<TokenId> prompt = Prompt(4, 45, m.config.vocab_size);
    const std::vector<float> det = KvWrittenBy(m, prompt, ExecMode::kDeterministic, 1);
    KvPool probe(m.config, 1, kBlockSize);
    Engine probe_engine(m.config, m.weights, &probe, EngineOptions{});
    for (int threads : {1, 2, 3}) {
      const std::vector<float> par = KvWrittenBy(m, prompt, ExecMode::kParallel, threads);
      const bool same = std::memcmp(det.data(), par.data(), det.size() * sizeof(float)) == 0;
      if (probe_engine.paths_write_same_kv()) {
        EXPECT_TRUE(same) << "type " << static_cast<int>(type) << ", " << threads << " threads";
      }
    }
    // The roots follow the same rule: shared when the paths agree, else one per path.
    const PrefixCacheOptions o = WithChainRoots({}, probe_engine, 42);
    EXPECT_EQ(o.deterministic_root == o.parallel_root, probe_engine.paths_write_same_kv());
  }
}

TEST(PrefixCacheEngineTest, ADeterministicRequestReusesParallelBlocksOnlyWhenTheyAreTheSameBits) {
  const LlamaModel tiny = MakeBuiltinTinyModel();
  KvPool probe(tiny.config, 1, kBlockSize);
  Engine probe_engine(tiny.config, tiny.weights, &probe, EngineOptions{});
  RecordProperty("paths_write_same_kv", probe_engine.paths_write_same_kv() ? "yes" : "no");
  if (probe_engine.paths_write_same_kv()) {
    ExpectHitIsBitwiseTheSame(tiny, ExecMode::kParallel);
  } else {
    const std::vector<TokenId> shared = Prompt(1, 37, tiny.config.vocab_size);
    const Outcome o = RunTarget(tiny, Join(shared, {5, 6}), &shared, ExecMode::kParallel, 1);
    EXPECT_EQ(o.cached_prompt_tokens, 0) << "the paths differ: no reuse across them";
  }
}

TEST(PrefixCacheEngineTest, APoolTooSmallForEveryRequestCompletesThemAllThroughPreemption) {
  const LlamaModel tiny = MakeBuiltinTinyModel();
  const int vocab = tiny.config.vocab_size;
  const std::vector<TokenId> shared = Prompt(9, 20, vocab);
  std::vector<std::vector<TokenId>> prompts;
  for (int i = 0; i < 4; ++i) prompts.push_back(Join(shared, Prompt(10 + i, 3 + 5 * i, vocab)));
  std::vector<std::vector<TokenId>> solo;
  for (const auto& p : prompts) {
    Harness h(tiny, 64);
    h.Submit(1, p, ExecMode::kDeterministic, 40);
    h.Run();
    solo.push_back(h.stream(1).ids);
  }
  // 12 blocks of 8 positions: four sequences of 63-78 positions (8-10 blocks each) cannot all
  // fit, so the newest are preempted, their full blocks stay cached (until evicted, least recently
  // used first, never while referenced), and they resume from the cache.
  Harness h(tiny, 12);
  for (int i = 0; i < 4; ++i) h.Submit(i + 1, prompts[i], ExecMode::kDeterministic, 40);
  h.Run();
  EXPECT_GT(h.preemptions(), 0);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(h.stream(i + 1).ids, solo[i]) << "sequence " << i;
    EXPECT_EQ(h.stream(i + 1).finish.reason, FinishReason::kLength);
  }
  EXPECT_EQ(h.blocks().num_used(), 0);
  EXPECT_GT(h.scheduler().prefix_cache().counters().hits, 0u);
  EXPECT_GT(h.blocks().evictions(), 0u);
}

TEST(PrefixCacheEngineTest, HitsAndUtilisationAreCountedInTheStats) {
  const LlamaModel tiny = MakeBuiltinTinyModel();
  const std::vector<TokenId> shared = Prompt(1, 37, tiny.config.vocab_size);
  Harness h(tiny, 64);
  h.Submit(1, Join(shared, {3}), ExecMode::kParallel);
  h.Run();
  h.Submit(2, Join(shared, {4, 5}), ExecMode::kParallel);
  h.Submit(3, {7, 8, 9}, ExecMode::kParallel, 30);
  SchedulerStats stats;
  h.scheduler().PublishStats(&stats);
  EXPECT_EQ(stats.Get(shared::WorkerStat::kPrefixCacheLookups), 1u);
  EXPECT_EQ(stats.Get(shared::WorkerStat::kKvPagesCached),
            5u);  // 43 computed positions: 5 full blocks, unreferenced
  h.Run();
  h.scheduler().PublishStats(&stats);
  EXPECT_EQ(stats.Get(shared::WorkerStat::kPrefixCacheLookups), 3u);
  EXPECT_EQ(stats.Get(shared::WorkerStat::kPrefixCacheHits), 1u);
  EXPECT_EQ(stats.Get(shared::WorkerStat::kPrefixCacheHitBlocks), 4u);
  EXPECT_EQ(stats.Get(shared::WorkerStat::kPrefixCacheHitTokens), 32u);
  EXPECT_EQ(h.stream(2).finish.cached_prompt_tokens, 32);
  EXPECT_EQ(h.stream(3).finish.cached_prompt_tokens, 0);
  EXPECT_EQ(stats.Get(shared::WorkerStat::kKvPagesUsed), 0u);
  EXPECT_EQ(stats.Get(shared::WorkerStat::kKvTokensStored), 0u);
}

}  // namespace
}  // namespace smallmind::worker
