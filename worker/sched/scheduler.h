// Scheduler: continuous batching over the KV block pool. Each step: Schedule() decides, without
// mutating, which sequences run and how many tokens each feeds (decodes first, then prefill chunks
// under a token budget); when the running sequences do not fit it returns false and the caller
// preempts the newest (PreemptNewest). Apply() commits the decision into a StepPlan. After the
// engine ran it, Advance() books the computed positions and names the sequences that pick a token
// now; the sampling stage (worker/sample/sample_step.h) picks them; Update() books the picks:
// appends each sequence's token, text and finish to the StepOutput, shifts the context of
// sequences that outgrew it (stopping.context_overflow = SHIFT) and retires finished sequences.
// The scheduler only plans and books: sampling, JSON constraints, penalties and stop checks live
// in each sequence's TokenPicker. It never calls a stream: the EngineLoop publishes the output.
// Owned by the scheduler thread; not thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "worker/kv/block_pool.h"
#include "worker/kv/prefix_cache.h"
#include "worker/sample/sample_step.h"
#include "worker/sched/cached_prefixes.h"
#include "worker/sched/scheduler_stats.h"
#include "worker/sched/sequence.h"
#include "worker/sched/step_output.h"
#include "worker/sched/step_plan.h"

namespace smallmind::worker {

struct SchedulerOptions {
  int max_step_tokens = 256;  // token budget of one step (decodes + prefill chunks)
  int max_seqs = 32;          // sequences in one step
  int max_waiting = 1024;     // queue length before RESOURCE_EXHAUSTED
  // Prefill tokens a step of d decodes may add: max(this, 2 d) (0: only max_step_tokens limits
  // them). A step's time grows with its tokens and every decoding stream waits for all of it, so
  // a long prompt arriving is prefilled in small chunks while streams run. 16: measured,
  // docs/kv-cache.md "Scheduling" (4 streams, 4 prompts of 512 arriving: their ITL p99 / p50 32
  // with no cap, 1.8 with 16, 3.5-3.7 with 24).
  int max_prefill_tokens_while_decoding = 16;
  // Reuse of cached full KV blocks; the worker sets the chain roots of its model.
  PrefixCacheOptions prefix_cache;
};

// The decision of one step: which sequences feed how many tokens. Plain data.
struct StepShape {
  struct Entry {
    Sequence* seq;
    int n_tokens;    // tokens fed this step
    int new_blocks;  // blocks to allocate before the step
    bool admitted;   // moves from waiting to running
    // Admitted only: leading blocks reused from the prefix cache (not fed, not allocated).
    int cached_blocks = 0;
  };
  std::vector<Entry> entries;
};

class Scheduler {
 public:
  Scheduler(const SchedulerOptions& options, BlockPool* pool, int block_size);
  ~Scheduler();

  // Queues a sequence; finishes it at once with RESOURCE_EXHAUSTED when the queue is full.
  void Add(std::unique_ptr<Sequence> seq);
  // Finishes a sequence as cancelled and frees its blocks; unknown ids are ignored (already done).
  void Cancel(uint64_t sequence_id);
  // Finishes every sequence as cancelled (shutdown).
  void CancelAll();

  bool idle() const { return running_.empty() && waiting_.empty(); }

  // Prepare: fills the next step's shape (reusing its capacity); false when the running sequences
  // need more blocks than are free. Mutates nothing else.
  bool Schedule(StepShape* shape) const;
  // Preempts the newest running sequence: frees its blocks; it recomputes later from the waiting
  // queue's front.
  void PreemptNewest();
  // Commit: allocates the blocks of `shape`, admits its waiting sequences and fills `plan`.
  void Apply(const StepShape& shape, StepPlan* plan);
  // After the engine ran `plan`: advances positions (and the prefix cache) and returns a slot for
  // every sequence whose prompt or last token is now in the cache: each picks its next token
  // from its plan entry's logits (SampleStep fills slot.pick). The slots live until Update.
  std::span<SampleSlot> Advance();
  // Books the picks of the slots Advance returned: appends tokens and finishes to output(),
  // shifts the contexts that overflow (their blocks freed, the kept window queued at the front
  // for recomputation) and retires finished sequences.
  void Update(std::span<const SampleSlot> slots);
  // Between Apply and Update: the id of the sequence that plan entry `plan_index` belongs to.
  uint64_t step_sequence_id(int plan_index) const { return step_seqs_[plan_index]->id; }

  // The events of the steps (and commands) since the caller last published them. The caller
  // hands them on (OutputQueue::Publish leaves this empty).
  StepOutput* mutable_output() { return &output_; }

  void PublishStats(SchedulerStats* stats) const;
  const PrefixCache& prefix_cache() const { return prefix_cache_; }

 private:
  int BlocksFor(int n_positions) const { return (n_positions + block_size_ - 1) / block_size_; }
  // Prompt tokens a step that decodes `decodes` sequences may add (with the option set).
  int PrefillCapWhileDecoding(int decodes) const;
  void CountStep(const StepShape& shape);
  void Emit(Sequence* seq, const Pick& pick, Clock::time_point now);
  void ShiftContexts();
  void Finish(Sequence* seq, FinishReason reason, shared::Status status);
  void Release(Sequence* seq);

  const SchedulerOptions options_;
  BlockPool* pool_;
  const int block_size_;
  PrefixCache prefix_cache_;  // over pool_: reuse of full blocks between sequences
  uint64_t requests_total_ = 0;
  uint64_t prompt_tokens_total_ = 0;
  uint64_t generation_tokens_total_ = 0;
  uint64_t context_shifts_total_ = 0;
  // What the steps fed; the averages weigh step k by (15/16)^age, about the last 16 steps.
  struct StepTotals {
    uint64_t steps = 0;
    uint64_t prefill_tokens = 0;
    uint64_t decode_tokens = 0;
    double tokens_per_step = 0;
    double sequences_per_step = 0;
  } totals_;
  CachedPrefixes cached_prefixes_;                  // prompts whose blocks are cached, for Stats
  std::deque<std::unique_ptr<Sequence>> waiting_;   // FIFO; preempted sequences go to the front
  std::vector<std::unique_ptr<Sequence>> running_;  // admission order: newest last
  std::vector<Sequence*> step_seqs_;  // [plan.seqs.size()]: the sequence of each plan entry
  std::vector<int> step_tokens_;      // [plan.seqs.size()]: tokens each entry fed
  std::vector<SampleSlot> slots_;     // [<= plan.seqs.size()]: the entries that pick this step
  StepOutput output_;                 // events not yet published; capacity reused
};

// The second half of a step after the engine ran the plan: advance -> sample -> update. `logits`
// and `for_each` as SampleStep takes them.
inline void SampleAndUpdate(Scheduler* scheduler,
                            const std::function<std::span<float>(int)>& logits,
                            const ForEachFn& for_each = nullptr) {
  const std::span<SampleSlot> slots = scheduler->Advance();
  SampleStep(slots, logits, for_each);
  scheduler->Update(slots);
}

}  // namespace smallmind::worker
