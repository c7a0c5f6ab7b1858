// Engine: runs batched steps of the model over the paged KV cache. The scheduler thread builds a
// StepPlan and calls Step(), then reads Logits(); one thread at a time, not thread-safe. Step()
// does no heap allocation: every buffer is sized at construction for EngineOptions' limits.
#pragma once

#include <span>

#include "kernels/kernels.h"
#include "worker/engine/activations.h"
#include "worker/engine/step_plan.h"
#include "worker/kv/kv_pool.h"
#include "worker/model/weights.h"

namespace smallmind::worker {

struct EngineOptions {
  int max_step_tokens = 512;  // tokens over all sequences of one step
  int max_seqs = 64;          // sequences in one step
};

class Engine {
 public:
  // `weights` and `kv` must outlive the engine; the engine writes K/V only at the positions plans
  // name.
  Engine(const ModelConfig& config, const Weights& weights, KvPool* kv,
         const EngineOptions& options);

  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Runs every seq's tokens through the model, writing their K/V into the pool. The plan must fit
  // the options and the model (checked: a violation is a scheduler bug and aborts).
  void Step(const StepPlan& plan);

  // [vocab_size] logits of the last token of plan.seqs[seq_index] of the last Step, which must have
  // had want_logits; valid until the next Step. Writable so a sampler may adjust them in place.
  std::span<float> Logits(int seq_index);

  const ModelConfig& config() const { return config_; }
  const EngineOptions& options() const { return options_; }

 private:
  void CheckPlan(const StepPlan& plan) const;

  const ModelConfig config_;
  const Weights& weights_;
  KvPool* kv_;
  const EngineOptions options_;
  const kernels::KernelTable kernels_;
  Activations act_;
  int last_step_seqs_ = 0;  // plan.seqs.size() of the last Step
};

}  // namespace smallmind::worker
