// DraftModel: speculative decoding's second model. Before each step it runs a small model with the
// target's vocabulary for the decoding sequences the scheduler names
// (Scheduler::DraftCandidates): one batched draft step per draft token, every drafting sequence's
// next token in the same step (the first step also catches each sequence's draft cache up with
// the tokens the target accepted since). Each draft is picked as the target picks (DraftPicker:
// the request's sampling and the seeded draw of that position), so where the draft's logits equal
// the target's, its drafts are the target's tokens, sampled or greedy. The drafts land in each
// sequence's DraftCache, where Scheduler::ProposeDraft reads them. It owns its own paged KV cache
// and engine, and runs on the target engine's thread pool (the worker's pinned threads), on the
// deterministic kernels, so the drafts are a function of the tokens. A draft never changes the
// output: the target verifies every one (docs/speculation.md). Propose() does no heap allocation
// after construction. Scheduler thread only; not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "shared/status.h"
#include "worker/engine/engine.h"
#include "worker/kv/block_pool.h"
#include "worker/kv/kv_pool.h"
#include "worker/sched/scheduler.h"
#include "worker/tokenizer/tokenizer.h"

namespace smallmind::worker {

struct DraftModelOptions {
  int max_seqs = 4;           // sequences drafting at once (the scheduler's speculation.max_batch)
  int max_draft = 8;          // drafts per sequence (speculation.draft.max_draft)
  int max_step_tokens = 256;  // tokens of one draft step (longer catch-ups take several)
  int num_blocks = 0;         // the draft KV pool's blocks
  int block_size = 16;
  kernels::KvType kv_type = kernels::KvType::kF16;
  kernels::Isa isa = kernels::Isa::kBest;
};

// r of the DraftController's model of cost: one draft decode step over one target decode step,
// both read-bound, so the ratio of their weight bytes.
double DraftStepCost(const LlamaModel& target, const LlamaModel& draft);

// What the proposals fed the draft model since it was built (tests and profiles count them).
struct DraftModelCounts {
  int64_t proposals = 0;        // sequences drafted for, one per sequence per Propose
  int64_t steps = 0;            // draft engine steps
  int64_t catch_up_tokens = 0;  // tokens fed to catch up with the target's (prompts included)
  int64_t draft_tokens = 0;     // drafts made
};

// OK when `draft` can draft for `target`: the same vocabulary size, kind, BOS/EOS and every
// token's piece; otherwise InvalidArgument naming both models and the first difference.
shared::Status CheckSameVocabulary(const Tokenizer& target, const std::string& target_name,
                                   const Tokenizer& draft, const std::string& draft_name);

class DraftModel {
 public:
  // `model` must outlive the draft model; `pool` is the target engine's (Engine::thread_pool()).
  DraftModel(const LlamaModel& model, const DraftModelOptions& options, ThreadPool* pool);

  // Drafts requests[i].length tokens (fewer where the draft's context or cache runs out; none
  // at all for a sequence whose blocks do not fit) for each sequence into its
  // spec.draft_model, first rolling its draft K/V back to what the target accepted.
  void Propose(std::span<const DraftRequest> requests);

  const BlockPool& blocks() const { return blocks_; }
  const DraftModelCounts& counts() const { return counts_; }
  const ModelConfig& config() const { return model_.config; }

 private:
  // Rolls seq's draft K/V back to the tokens it shares with the last proposal, sizes its block
  // table for `length` drafts; false when the blocks do not fit (then it drafts nothing).
  bool Prepare(Sequence* seq, int length);
  // Runs plan_, then appends each wanting entry's pick (its DraftPicker's) to its drafts.
  void RunStep();

  const LlamaModel& model_;
  const DraftModelOptions options_;
  KvPool kv_;
  BlockPool blocks_;
  Engine engine_;
  StepPlan plan_;
  std::vector<Sequence*> plan_seqs_;  // [plan_.seqs.size()]: whose entry
  std::vector<Sequence*> drafting_;   // this proposal's sequences
  std::vector<int> lengths_;          // [drafting_]: drafts wanted
  DraftModelCounts counts_;
};

}  // namespace smallmind::worker
