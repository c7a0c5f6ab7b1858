// StepDriver (test helper): a scheduler and an engine over one KV pool, stepped as EngineLoop does
// (schedule, preempting the newest until the batch fits; apply; engine step; update; publish),
// keeping each sequence's stream and the logits every one of its tokens was sampled from, so tests
// can compare a sequence run in a busy batch with the same sequence run alone. Header-only; one
// test thread, not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "tests/worker/sched/stream_recorder.h"
#include "worker/engine/draft_model.h"
#include "worker/engine/engine.h"
#include "worker/kv/block_pool.h"
#include "worker/kv/kv_pool.h"
#include "worker/sched/output_queue.h"
#include "worker/sched/scheduler.h"
#include "worker/tokenizer/spm_tokenizer.h"

namespace smallmind::worker::testing {

struct StepDriverOptions {
  int num_blocks = 64;
  int block_size = 8;
  int threads = 1;
  int max_step_tokens = 64;
  int max_seqs = 8;
  PrefixCacheOptions prefix_cache = {};
  bool parallel_sampling = false;  // sample on the engine's threads, as EngineLoop does
  // Release blocks behind a sliding window every layer has, as the worker does
  // (SchedulerOptions::release_window = ModelConfig::AllLayersWindow()).
  bool release_behind_window = true;
  SchedulerOptions::Speculation speculation = {};  // ngram 0: no drafting
  kernels::Isa isa = kernels::Isa::kBest;
  // A draft model (same vocabulary; outlives the driver) with its own pool of this many blocks;
  // sets speculation.draft_model.
  const LlamaModel* draft_model = nullptr;
  int draft_blocks = 64;
};

class StepDriver {
 public:
  StepDriver(const LlamaModel& model, const StepDriverOptions& o) : model_(model) {
    kv_ = std::make_unique<KvPool>(model.config, o.num_blocks, o.block_size);
    blocks_ = std::make_unique<BlockPool>(o.num_blocks, o.block_size);
    EngineOptions eo;
    eo.max_step_tokens = o.max_step_tokens;
    eo.max_seqs = o.max_seqs;
    eo.num_threads = o.threads;
    eo.parallel_threshold = 1;  // split every op that can be split: the most thread-dependent run
    parallel_sampling_ = o.parallel_sampling;
    SchedulerOptions so;
    so.max_step_tokens = o.max_step_tokens;
    so.max_seqs = o.max_seqs;
    so.prefix_cache = o.prefix_cache;
    so.release_window = o.release_behind_window ? model.config.AllLayersWindow() : 0;
    so.speculation = o.speculation;
    so.speculation.draft_model = o.draft_model != nullptr;
    eo.max_logit_rows = so.max_logit_rows();
    eo.isa = o.isa;
    engine_ = std::make_unique<Engine>(model.config, model.weights, kv_.get(), eo);
    if (o.draft_model != nullptr) {
      DraftModelOptions d;
      d.max_seqs = so.speculation.max_batch;
      d.max_draft = so.speculation.draft.max_draft;
      d.max_step_tokens = o.max_step_tokens;
      d.num_blocks = o.draft_blocks;
      d.block_size = o.block_size;
      // The target's K/V type, as the worker gives both (--kv-dtype): F16 draft K/V move a
      // sampled draw that lands near a boundary away from the target's.
      d.kv_type = kernels::KvType::kF32;
      draft_ = std::make_unique<DraftModel>(*o.draft_model, d, engine_->thread_pool());
      draft_requests_.reserve(o.max_seqs);
    }
    scheduler_ = std::make_unique<Scheduler>(so, blocks_.get(), o.block_size);
  }
  ~StepDriver() { scheduler_->CancelAll(); }

  void Add(uint64_t id, SequenceRequest request) {
    scheduler_->Add(std::make_unique<Sequence>(id, std::move(request), *tokenizer_,
                                               model_.config.vocab_size, nullptr));
    Flush();
  }
  void Cancel(uint64_t id) {
    scheduler_->Cancel(id);
    Flush();
  }

  // One step; false when there was nothing to run.
  bool Step() {
    if (draft_ != nullptr) {
      scheduler_->DraftCandidates(&draft_requests_);
      if (!draft_requests_.empty()) draft_->Propose(draft_requests_);
      if (after_propose_) after_propose_(draft_requests_);
    }
    while (!scheduler_->Schedule(&shape_)) {
      scheduler_->PreemptNewest();
      ++preemptions_;
    }
    if (shape_.entries.empty()) return false;
    scheduler_->Apply(shape_, &plan_);
    max_batch_ = std::max(max_batch_, static_cast<int>(plan_.seqs.size()));
    engine_->Step(plan_);
    if (parallel_sampling_) {
      // Logits are copied first: the samplers then run on several threads at once.
      for (size_t i = 0; i < plan_.seqs.size(); ++i) {
        if (plan_.seqs[i].want_logits) Keep(static_cast<int>(i), 0);
      }
      // Rows past the first are read by the (serial) verification of drafts, in pick order.
      SampleAndUpdate(
          scheduler_.get(),
          LogitsAtFn([this](int i, int j) { return j == 0 ? engine_->Logits(i) : Keep(i, j); }),
          [this](int n, const std::function<void(int)>& body) { engine_->ForEach(n, body); });
    } else {
      SampleAndUpdate(scheduler_.get(), LogitsAtFn([this](int i, int j) { return Keep(i, j); }));
    }
    ++steps_;
    Flush();
    return true;
  }
  // Steps until idle (bounded); returns the number of steps.
  int RunToIdle(int max_steps = 10000) {
    int n = 0;
    while (n < max_steps && Step()) ++n;
    return n;
  }

  const RecordedStream& stream(uint64_t id) { return recorder_[id]; }
  // [tokens sampled][vocab] the engine's logits each token of sequence `id` was drawn from, in
  // order, copied before the sampler's penalties touch them.
  const std::vector<std::vector<float>>& logits(uint64_t id) { return logits_[id]; }
  int preemptions() const { return preemptions_; }
  int steps() const { return steps_; }
  int max_batch() const { return max_batch_; }  // most sequences in one step
  const BlockPool& blocks() const { return *blocks_; }
  Scheduler& scheduler() { return *scheduler_; }
  DraftModel* draft() { return draft_.get(); }
  // Called after every draft proposal with the sequences it drafted for (tests inspect them).
  void set_after_propose(std::function<void(std::span<const DraftRequest>)> f) {
    after_propose_ = std::move(f);
  }
  const Engine& engine() const { return *engine_; }

 private:
  // Records the logits row j of plan entry i (before the sampler's penalties touch them); the
  // rows a sequence's tokens were drawn from are recorded in order, whatever drafts it verified.
  std::span<float> Keep(int i, int j) {
    std::span<float> l = engine_->Logits(i, j);
    logits_[scheduler_->step_sequence_id(i)].emplace_back(l.begin(), l.end());
    return l;
  }
  void Flush() {
    outputs_.Publish(scheduler_->mutable_output());
    recorder_.Drain(&outputs_);
  }

  const LlamaModel& model_;
  std::unique_ptr<SpmTokenizer> tokenizer_ = MakeByteLevelTokenizer();
  std::unique_ptr<KvPool> kv_;
  std::unique_ptr<BlockPool> blocks_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<DraftModel> draft_;  // before the scheduler: its sequences hold draft blocks
  std::vector<DraftRequest> draft_requests_;
  std::function<void(std::span<const DraftRequest>)> after_propose_;
  std::unique_ptr<Scheduler> scheduler_;
  OutputQueue outputs_;
  StreamRecorder recorder_;
  StepShape shape_;
  StepPlan plan_;
  std::map<uint64_t, std::vector<std::vector<float>>> logits_;
  bool parallel_sampling_ = false;
  int preemptions_ = 0;
  int steps_ = 0;
  int max_batch_ = 0;
};

}  // namespace smallmind::worker::testing
