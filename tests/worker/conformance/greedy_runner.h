// GreedyRunner: runs prompts through one Engine as a server would, each prompt's ids in one
// prefill slice and then one token per step, calling back with the logits of every step so the
// caller picks the token fed next (or ends the prompt). Prompts run one at a time, or all in one
// batch (prefills and decodes of different prompts in the same steps). Header-only test helper;
// one thread, not thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "worker/engine/engine.h"
#include "worker/kv/kv_pool.h"

namespace smallmind::worker::testing {

struct GreedyRunnerOptions {
  kernels::ExecMode mode = kernels::ExecMode::kDeterministic;
  int threads = 1;
  bool batched = false;  // all prompts in the same steps, else one prompt after another
  kernels::KvType kv_type = kernels::KvType::kF32;
};

class GreedyRunner {
 public:
  // Returns the token to feed after `step` (0 = the prompt's) of prompt `prompt`, or nullopt to
  // end that prompt. `logits` are valid during the call only.
  using StepFn =
      std::function<std::optional<TokenId>(int prompt, int step, std::span<const float> logits)>;

  // Room for `prompts` prompts of up to `max_tokens` tokens each (prompt plus fed tokens).
  GreedyRunner(const LlamaModel& model, const GreedyRunnerOptions& o, int prompts, int max_tokens)
      : options_(o), blocks_per_seq_((max_tokens + kBlockSize - 1) / kBlockSize) {
    kv_ = std::make_unique<KvPool>(model.config, prompts * blocks_per_seq_, kBlockSize, o.kv_type);
    EngineOptions eo;
    eo.max_step_tokens = prompts * max_tokens;
    eo.max_seqs = prompts;
    eo.num_threads = o.threads;
    eo.parallel_threshold = 1;  // split every op that can be split: the most thread-dependent run
    engine_ = std::make_unique<Engine>(model.config, model.weights, kv_.get(), eo);
  }

  // Runs every prompt until its callback ends it or `max_steps` steps of it have run.
  void Run(const std::vector<std::vector<TokenId>>& prompts, int max_steps, const StepFn& fn) {
    std::vector<Seq> seqs;
    for (size_t i = 0; i < prompts.size(); i++) {
      Seq s{static_cast<int>(i), prompts[i], 0, 0, false, {}};
      for (int b = 0; b < blocks_per_seq_; b++) s.table.push_back(int(i) * blocks_per_seq_ + b);
      seqs.push_back(std::move(s));
    }
    const int bound = static_cast<int>(prompts.size()) * (max_steps + 1);
    for (int n = 0; n < bound && Step(seqs, max_steps, fn); n++) {
    }
  }

 private:
  static constexpr int kBlockSize = 16;

  struct Seq {
    int index;
    std::vector<TokenId> tokens;  // prompt, then every token fed
    int fed;                      // tokens already in the KV cache
    int step;                     // logits rows seen
    bool done;
    std::vector<int32_t> table;
  };

  // One engine step over the live sequences (the first one only unless batched); false when none
  // is left.
  bool Step(std::vector<Seq>& seqs, int max_steps, const StepFn& fn) {
    StepPlan plan;
    plan.mode = options_.mode;
    std::vector<Seq*> in_plan;
    for (Seq& s : seqs) {
      if (s.done) continue;
      const std::span<const TokenId> all(s.tokens);
      plan.seqs.push_back(SeqStep{all.subspan(s.fed), s.fed, s.table, true});
      in_plan.push_back(&s);
      if (!options_.batched) break;
    }
    if (in_plan.empty()) return false;
    engine_->Step(plan);
    for (size_t i = 0; i < in_plan.size(); i++) {
      Seq& s = *in_plan[i];
      s.fed = static_cast<int>(s.tokens.size());
      const std::optional<TokenId> next = fn(s.index, s.step, engine_->Logits(static_cast<int>(i)));
      s.step++;
      if (next && s.step < max_steps) {
        s.tokens.push_back(*next);
      } else {
        s.done = true;
      }
    }
    return true;
  }

  const GreedyRunnerOptions options_;
  const int blocks_per_seq_;
  std::unique_ptr<KvPool> kv_;
  std::unique_ptr<Engine> engine_;
};

}  // namespace smallmind::worker::testing
