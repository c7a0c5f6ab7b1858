// Engine: runs batched steps of the model over the paged KV cache on a pinned thread pool. The
// scheduler thread builds a StepPlan and calls Step(), then reads Logits(); one thread at a time,
// not thread-safe (the calling thread joins the pool as its thread 0). Step() does no heap
// allocation: every buffer is sized at construction for EngineOptions' limits.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/kernels.h"
#include "worker/engine/activations.h"
#include "worker/engine/op_profile.h"
#include "worker/engine/packed_weights.h"
#include "worker/engine/thread_pool.h"
#include "worker/kv/kv_pool.h"
#include "worker/model/weights.h"
#include "worker/sched/step_plan.h"

namespace smallmind::worker {

struct EngineOptions {
  int max_step_tokens = 512;  // tokens over all sequences of one step
  int max_seqs = 64;          // sequences in one step
  int num_threads = 1;        // threads of the pool, the thread calling Step() included
  // Thread i is pinned to cpus[i % size] (empty: no pinning); memory is bound to the NUMA node of
  // these CPUs when the machine has several.
  std::vector<int> cpus = {};
  int parallel_threshold = 4;  // default rows per thread below which an op stays on one thread
  kernels::Isa isa = kernels::Isa::kBest;  // kernel set (kRef: the scalar oracles)
  // Logits rows over all sequences of one step (0: max_seqs, one a sequence); speculative
  // verification asks a row per fed token.
  int max_logit_rows = 0;
  // Run on this pool (another engine's, which must outlive this one, with num_threads threads)
  // instead of starting one: a draft model shares the target's pinned threads.
  ThreadPool* shared_pool = nullptr;
  // Pack every expert of an MoE model now instead of on its first use (PackedWeights): the load
  // takes longer and every expert is resident, but no step pays an expert's packing. Benchmarks
  // of the steady state set it.
  bool pack_experts_at_load = false;
};

class Engine {
 public:
  // `weights` and `kv` must outlive the engine; the engine writes K/V only at the positions plans
  // name.
  Engine(const ModelConfig& config, const Weights& weights, KvPool* kv,
         const EngineOptions& options);
  ~Engine();

  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Runs every seq's tokens through the model, writing their K/V into the pool, with the kernels
  // of plan.mode on at most plan.max_threads threads (0: all). The plan must fit the options and
  // the model (checked: a violation is a scheduler bug and aborts).
  void Step(const StepPlan& plan);

  // [vocab_size] logits of token `j` of the logits_tokens last tokens of plan.seqs[seq_index] of
  // the last Step (j = 0: the first of them; the last token when logits_tokens is 1), which must
  // have had want_logits; valid until the next Step. Writable so a sampler may adjust them in
  // place.
  std::span<float> Logits(int seq_index, int j = 0);

  // [dim] the pooled embedding (not normalised) of plan.seqs[seq_index] of the last Step, which
  // must have asked one (SeqStep::embed); [rank_outputs] a reranker's head values for a seq
  // pooled kRank. Valid until the next Step.
  std::span<const float> Embedding(int seq_index) const;

  // Runs body(i) for every i in [0, n) on the engine's threads (parts claimed dynamically) and
  // returns when all are done; for per-sequence work between steps, such as sampling. Same thread
  // contract as Step(); body must not call the engine.
  void ForEach(int n, const std::function<void(int)>& body);

  const ModelConfig& config() const { return config_; }
  const EngineOptions& options() const { return options_; }
  // The pool the engine's ops run on (for EngineOptions::shared_pool of a second engine).
  ThreadPool* thread_pool() const { return pool_; }
  // The packed copies of the weights (experts packed as they are first used).
  const PackedWeights& packed_weights() const { return packed_; }
  // Times every op of the Steps that follow, and each whole Step, into `profile` (null: stops);
  // it must outlive its use. For benchmarks (decode_bench --op-profile); a step pays a clock read
  // around each op.
  void set_op_profile(OpProfile* profile) { profile_ = profile; }
  // True when both paths run the same kernels (as on AVX2 today), so K/V written by a parallel
  // step are bitwise what a deterministic step writes: the prefix cache may then share blocks
  // between the paths. Rows of every op are independent, so the partitions do not matter.
  bool paths_write_same_kv() const { return paths_write_same_kv_; }
  // Element type of the K/V rows the engine stores.
  kernels::KvType kv_type() const { return kv_->type(); }

 private:
  void CheckPlan(const StepPlan& plan) const;
  void CheckEncoderPlan(const StepPlan& plan) const;

  const ModelConfig config_;
  const Weights& weights_;
  KvPool* kv_;
  const EngineOptions options_;
  const kernels::KernelTable deterministic_;  // kernels of ExecMode::kDeterministic
  const kernels::KernelTable parallel_;       // kernels of ExecMode::kParallel
  const PackedWeights packed_;  // matrices either table reads repacked, once per layout
  Activations act_;
  std::unique_ptr<ThreadPool> own_pool_;  // null with options.shared_pool
  ThreadPool* pool_ = nullptr;            // own_pool_ or options.shared_pool
  bool paths_write_same_kv_ = false;
  std::vector<int> last_logits_tokens_;  // [max_seqs]: logits_tokens of each seq of the last Step
  std::vector<int> last_embed_;          // [max_seqs]: values each seq's embedding has (0: none)
  int last_step_seqs_ = 0;               // plan.seqs.size() of the last Step
  OpProfile* profile_ = nullptr;
};

}  // namespace smallmind::worker
