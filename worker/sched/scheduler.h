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
#include "worker/spec/draft_controller.h"
#include "worker/spec/ngram_drafter.h"

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
  // Positions every layer of the model sees (ModelConfig::AllLayersWindow): > 0, blocks wholly
  // behind that sliding window are released as the sequence advances; 0, a sequence keeps all.
  int release_window = 0;
  // Speculative decoding (worker/spec/README.md): decoding sequences propose draft tokens that
  // the step verifies with one batched pass; the tokens stay those of plain decoding.
  struct Speculation {
    int ngram = 0;  // n-gram drafter: shortest suffix match (--spec-ngram); 0: no drafter
    // A draft model proposes drafts before each step (--draft-model; EngineLoop runs it for
    // DraftCandidates). With ngram too, the n-gram drafter proposes for a sequence the draft
    // model gave nothing (its draft cache full, or past the draft's context).
    bool draft_model = false;
    bool any() const { return ngram > 0 || draft_model; }
    DraftControllerOptions draft;  // draft.max_draft: --spec-max-draft
    // Steps decoding more sequences than this draft nothing: the batch's matmuls are then
    // compute-bound and verifying drafts would cost what they save (--spec-max-batch).
    int max_batch = 4;
  } speculation;
  // An encoder model (ModelConfig::encoder): every sequence is one input fed whole in one step
  // (Add refuses one longer than max_step_tokens), holds no KV blocks and skips the prefix cache.
  bool encoder = false;
  // Logits rows a step may ask for: max_seqs plus room for every speculating sequence's drafts.
  int max_logit_rows() const {
    return max_seqs + (speculation.any() ? speculation.max_batch * speculation.draft.max_draft : 0);
  }
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
    // Decodes only: draft tokens fed after the last accepted one, drafts[draft_begin, +draft).
    int draft = 0;
    int draft_begin = 0;
    bool draft_by_model = false;  // the draft model's drafts, else the n-gram drafter's
  };
  std::vector<Entry> entries;
  std::vector<TokenId> drafts;  // every entry's draft tokens (capacity reused)
};

// A decoding sequence the draft model should propose `length` drafts for before the next step.
struct DraftRequest {
  Sequence* seq;
  int length;
};

// Logits of token j of plan entry `row`'s logits rows (j = 0: the first; Engine::Logits).
using LogitsAtFn = std::function<std::span<float>(int row, int j)>;
// The pooled embedding of plan entry `row` (Engine::Embedding).
using EmbeddingAtFn = std::function<std::span<const float>(int row)>;

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
  // With a draft model: the decoding sequences the next Schedule would ask for drafts, and how many
  // each (before the step budget cuts them), into *out (cleared; capacity max_seqs reused). Empty
  // when the step will not speculate (more decodes than max_batch).
  void DraftCandidates(std::vector<DraftRequest>* out) const;
  // Preempts the newest running sequence: frees its blocks; it recomputes later from the waiting
  // queue's front.
  void PreemptNewest();
  // Commit: allocates the blocks of `shape`, admits its waiting sequences and fills `plan`.
  void Apply(const StepShape& shape, StepPlan* plan);
  // After the engine ran `plan`: advances positions (and the prefix cache) and returns a slot for
  // every sequence whose prompt or last token is now in the cache: each picks its next token
  // from its plan entry's logits (SampleStep fills slot.pick). The slots live until Update.
  std::span<SampleSlot> Advance();
  // After Advance: finishes every embedding sequence (SequenceRequest::embed) whose input is now
  // computed, its finish event carrying embedding(row) as pooled. Required when Advance found one.
  void FinishEmbeddings(const EmbeddingAtFn& embedding);
  // Books the picks of the slots Advance returned: appends tokens and finishes to output(),
  // verifies the drafts of speculating sequences (each further row's pick, drawn by the same
  // picker in order, while the picks agree with the drafts: `logits` gives those rows; required
  // when a step fed drafts), shifts the contexts that overflow (their blocks freed, the kept window
  // queued at the front for recomputation) and retires finished sequences.
  void Update(std::span<const SampleSlot> slots, const LogitsAtFn& logits = nullptr);
  // Between Apply and Update: the id of the sequence that plan entry `plan_index` belongs to.
  uint64_t step_sequence_id(int plan_index) const { return step_seqs_[plan_index]->id; }

  // The events of the steps (and commands) since the caller last published them. The caller
  // hands them on (OutputQueue::Publish leaves this empty).
  StepOutput* mutable_output() { return &output_; }

  void PublishStats(SchedulerStats* stats) const;
  const PrefixCache& prefix_cache() const { return prefix_cache_; }

 private:
  int BlocksFor(int n_positions) const { return (n_positions + block_size_ - 1) / block_size_; }
  // An encoder's waiting inputs into *shape, whole and in order, while the step's `budget`
  // tokens hold them (no blocks: they keep no cache); returns true.
  bool AdmitWholeInputs(int budget, StepShape* shape) const;
  // Prompt tokens a step that decodes `decodes` sequences may add (with the option set).
  int PrefillCapWhileDecoding(int decodes) const;
  void CountStep(const StepShape& shape);
  // Apply: the plan slice of entry `e` (for a verification step, its feed of last token + drafts).
  SeqStep SliceOf(const StepShape& shape, const StepShape::Entry& e);
  // Decoding sequences this step: every running one with exactly one pending token; *prefills:
  // the running ones with more.
  int CountDecodes(int* prefills) const;
  // Draft tokens worth verifying for `seq` now (the controller's length, capped by the request's
  // last token and a shifting request's context); <= 0: none.
  int DraftLength(const Sequence& seq) const;
  // Drafts `seq` proposes into shape->drafts, at most `room` tokens: the draft model's, else the
  // n-gram drafter's (*by_model says which); returns how many.
  int ProposeDraft(const Sequence& seq, int room, StepShape* shape, bool* by_model) const;
  // After `seq`'s first pick (`pick`, already emitted): the drafts it fed are accepted while the
  // picks agree with them; rolls the cache back past the accepted ones.
  void VerifyDraft(Sequence* seq, int row, int draft, Pick pick, const LogitsAtFn& logits,
                   Clock::time_point now);
  // Releases the blocks of `seq`'s table past its first `keep` ones (unnamed draft blocks).
  void ReleaseBlocksPast(Sequence* seq, int keep);
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
  // Per drafter: drafts verified and, of those, accepted.
  struct DraftTotals {
    uint64_t drafted = 0;
    uint64_t accepted = 0;
  };
  DraftTotals ngram_totals_;
  DraftTotals model_totals_;
  DraftTotals& TotalsOf(const Sequence& seq) {
    return seq.spec.drafts_by_model ? model_totals_ : ngram_totals_;
  }
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
  std::vector<int> step_drafts_;      // [plan.seqs.size()]: draft tokens among them
  std::vector<SampleSlot> slots_;     // [<= plan.seqs.size()]: the entries that pick this step
  std::vector<int> embed_rows_;       // [<= plan.seqs.size()]: the entries whose input is embedded
  StepOutput output_;                 // events not yet published; capacity reused
};

// The second half of a step after the engine ran the plan: advance -> sample -> update. `logits`
// and `for_each` as SampleStep takes them.
inline void SampleAndUpdate(Scheduler* scheduler,
                            const std::function<std::span<float>(int)>& logits,
                            const ForEachFn& for_each = nullptr) {
  const std::span<SampleSlot> slots = scheduler->Advance();
  scheduler->FinishEmbeddings(nullptr);
  SampleStep(slots, logits, for_each);
  scheduler->Update(slots);
}
// The same for a scheduler that may speculate: `logits` gives every logits row of an entry.
// `embedding` gives the pooled rows of the entries that embed (none may when it is null).
inline void SampleAndUpdate(Scheduler* scheduler, const LogitsAtFn& logits,
                            const ForEachFn& for_each = nullptr,
                            const EmbeddingAtFn& embedding = nullptr) {
  const std::span<SampleSlot> slots = scheduler->Advance();
  scheduler->FinishEmbeddings(embedding);
  SampleStep(
      slots, [&](int row) { return logits(row, 0); }, for_each);
  scheduler->Update(slots, logits);
}

}  // namespace smallmind::worker
