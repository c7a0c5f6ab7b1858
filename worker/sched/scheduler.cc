#include "worker/sched/scheduler.h"

#include <algorithm>

#include "shared/check.h"

namespace smallmind::worker {

Scheduler::Scheduler(const SchedulerOptions& options, BlockPool* pool, int block_size)
    : options_(options),
      pool_(pool),
      block_size_(block_size),
      prefix_cache_(pool, options.prefix_cache) {
  SM_CHECK(options.max_step_tokens > 0 && options.max_seqs > 0 && block_size > 0);
  SM_CHECK(pool->block_size() == block_size) << "block pool and scheduler disagree on block size";
  running_.reserve(options.max_seqs);
  step_seqs_.reserve(options.max_seqs);
  step_tokens_.reserve(options.max_seqs);
  step_drafts_.reserve(options.max_seqs);
  slots_.reserve(options.max_seqs);
  embed_rows_.reserve(options.max_seqs);
}

Scheduler::~Scheduler() { CancelAll(); }

void Scheduler::Add(std::unique_ptr<Sequence> seq) {
  if (static_cast<int>(waiting_.size()) >= options_.max_waiting) {
    FinishEvent rejected;
    rejected.status = shared::ResourceExhausted(
        "worker queue is full (" + std::to_string(options_.max_waiting) + " waiting requests)");
    output_.AddFinish(seq->sink, seq->id, std::move(rejected));
    return;
  }
  if (options_.encoder && seq->num_prompt_tokens > options_.max_step_tokens) {
    FinishEvent refused;
    refused.status =
        shared::InvalidArgument("the input has " + std::to_string(seq->num_prompt_tokens) +
                                " tokens, more than an encoder step holds (" +
                                std::to_string(options_.max_step_tokens) + ", --max-step-tokens)");
    output_.AddFinish(seq->sink, seq->id, std::move(refused));
    return;
  }
  int max_positions = seq->num_prompt_tokens + seq->request.stopping.max_new_tokens;
  if (seq->request.overflow.shift) {
    max_positions = std::min(max_positions, seq->request.overflow.context_length);
  }
  seq->block_table.reserve(BlocksFor(max_positions));
  if (options_.speculation.any()) {
    seq->spec.controller = DraftController(options_.speculation.draft);
    seq->spec.feed.reserve(1 + std::max(0, options_.speculation.draft.max_draft));
  }
  if (options_.speculation.draft_model) {
    seq->spec.draft_model.drafts.reserve(std::max(0, options_.speculation.draft.max_draft));
    seq->spec.draft_model.blocks.reserve(BlocksFor(max_positions) + 1);
    const Sampler& sampler = seq->picker.sampler();
    seq->spec.draft_model.picker.emplace(sampler.params(), sampler.vocab_size());
  }
  ++requests_total_;
  prompt_tokens_total_ += seq->num_prompt_tokens;
  waiting_.push_back(std::move(seq));
}

void Scheduler::Cancel(uint64_t sequence_id) {
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
    if ((*it)->id == sequence_id) {
      Finish(it->get(), FinishReason::kCancelled, shared::Status::Ok());
      waiting_.erase(it);
      return;
    }
  }
  for (auto& seq : running_) {
    if (seq->id == sequence_id && !seq->finished) {
      Finish(seq.get(), FinishReason::kCancelled, shared::Status::Ok());
    }
  }
  std::erase_if(running_, [](const auto& s) { return s->finished; });
}

void Scheduler::CancelAll() {
  for (auto& seq : waiting_) Finish(seq.get(), FinishReason::kCancelled, shared::Status::Ok());
  waiting_.clear();
  for (auto& seq : running_) {
    if (!seq->finished) Finish(seq.get(), FinishReason::kCancelled, shared::Status::Ok());
  }
  running_.clear();
}

bool Scheduler::Schedule(StepShape* out) const {
  StepShape& shape = *out;
  shape.entries.clear();
  shape.drafts.clear();
  int budget = options_.max_step_tokens;
  int free_blocks = pool_->num_free();
  int prefills = 0;  // running sequences with a prompt chunk pending
  const int total_decodes = options_.speculation.any() ? CountDecodes(&prefills) : 0;
  const bool speculate = total_decodes > 0 && total_decodes <= options_.speculation.max_batch;
  // Running sequences: decodes first so a long prompt never stalls them, then prefill chunks.
  int decodes = 0;
  for (bool decode_pass : {true, false}) {
    if (!decode_pass && decodes > 0 && options_.max_prefill_tokens_while_decoding > 0) {
      budget = std::min(budget, PrefillCapWhileDecoding(decodes));
    }
    for (const auto& seq : running_) {
      int pending = seq->num_pending();
      if (pending == 0 || (pending == 1) != decode_pass) continue;
      if (static_cast<int>(shape.entries.size()) == options_.max_seqs || budget == 0) break;
      int have = static_cast<int>(seq->block_table.size());
      int n = std::min({pending, budget, (have + free_blocks) * block_size_ - seq->num_computed});
      if (n <= 0) return false;  // out of blocks: the caller preempts the newest
      StepShape::Entry entry{seq.get(), n, 0, false};
      if (speculate && decode_pass) {
        // Drafts take only what the decodes after this one leave (a token and a block each),
        // and leave a block to every running prefill: speculation never preempts anything.
        const int later = total_decodes - decodes - 1;
        const int room =
            std::min(budget - 1 - later,
                     (have + free_blocks - later - prefills) * block_size_ - seq->num_computed - 1);
        entry.draft_begin = static_cast<int>(shape.drafts.size());
        entry.draft = ProposeDraft(*seq, room, &shape, &entry.draft_by_model);
        entry.n_tokens = n += entry.draft;
      }
      entry.new_blocks = BlocksFor(seq->num_computed + n) - have;
      free_blocks -= entry.new_blocks;
      budget -= n;
      shape.entries.push_back(entry);
      decodes += decode_pass ? 1 : 0;
    }
  }
  // Waiting sequences in FIFO order, keeping one free block per running sequence so the next
  // decode step does not preempt what was just admitted. A cached prefix is not recomputed; taking
  // its unreferenced blocks uses up room like allocating would.
  if (options_.encoder) return AdmitWholeInputs(budget, out);
  for (const auto& seq : waiting_) {
    if (static_cast<int>(shape.entries.size()) == options_.max_seqs || budget == 0) break;
    const PrefixCache::Match hit = prefix_cache_.Find(seq->tokens, seq->request.mode);
    const int cached = hit.blocks * block_size_;
    int spare = free_blocks - hit.evictable - static_cast<int>(shape.entries.size());
    int n = std::min({seq->num_pending() - cached, budget, spare * block_size_});
    if (n <= 0) break;
    int need = BlocksFor(cached + n) - hit.blocks;
    free_blocks -= need + hit.evictable;
    budget -= n;
    shape.entries.push_back({seq.get(), n, need, true, hit.blocks});
  }
  return true;
}

bool Scheduler::AdmitWholeInputs(int budget, StepShape* shape) const {
  for (const auto& seq : waiting_) {
    const int n = seq->num_pending();
    if (static_cast<int>(shape->entries.size()) == options_.max_seqs || n > budget) break;
    budget -= n;
    shape->entries.push_back({seq.get(), n, 0, true, 0});
  }
  return true;
}

int Scheduler::CountDecodes(int* prefills) const {
  int n = 0;
  *prefills = 0;
  for (const auto& seq : running_) {
    n += seq->num_pending() == 1 ? 1 : 0;
    *prefills += seq->num_pending() > 1 ? 1 : 0;
  }
  return n;
}

void Scheduler::DraftCandidates(std::vector<DraftRequest>* out) const {
  out->clear();
  int prefills = 0;
  const int decodes = options_.speculation.draft_model ? CountDecodes(&prefills) : 0;
  if (decodes == 0 || decodes > options_.speculation.max_batch) return;
  for (const auto& seq : running_) {
    if (seq->num_pending() != 1) continue;
    const int len = DraftLength(*seq);
    if (len > 0) out->push_back({seq.get(), len});
  }
}

int Scheduler::DraftLength(const Sequence& seq) const {
  if (!seq.request.speculate) return 0;
  int len = seq.spec.controller.length();
  // Drafts past the request's last token, or past the context of a shifting request, would be
  // verified for nothing.
  len = std::min(len, seq.request.stopping.max_new_tokens - seq.num_generated() - 1);
  if (seq.request.overflow.shift) {
    len = std::min(len, seq.request.overflow.context_length - seq.num_tokens());
  }
  return len;
}

int Scheduler::ProposeDraft(const Sequence& seq, int room, StepShape* shape, bool* by_model) const {
  *by_model = false;
  const int len = std::min(room, DraftLength(seq));
  if (len <= 0) return 0;
  const size_t begin = shape->drafts.size();
  const std::span<const TokenId> model =
      seq.spec.draft_model.DraftsFor(seq.num_tokens(), seq.context_shifts);
  if (!model.empty() || options_.speculation.ngram <= 0) {
    *by_model = true;
    const size_t n = std::min(model.size(), static_cast<size_t>(len));
    shape->drafts.insert(shape->drafts.end(), model.begin(), model.begin() + n);
    return static_cast<int>(n);
  }
  shape->drafts.resize(begin + static_cast<size_t>(len));
  const NgramOptions ngram{.min_match = options_.speculation.ngram,
                           .max_match = std::max(options_.speculation.ngram, 8)};
  const int n =
      ProposeNgramDraft(seq.tokens, ngram, std::span<TokenId>(shape->drafts).subspan(begin));
  shape->drafts.resize(begin + static_cast<size_t>(n));
  return n;
}

int Scheduler::PrefillCapWhileDecoding(int decodes) const {
  // A step of d decodes takes about as long as d / 2 prefill tokens add to it (bench-110M, 2
  // threads: 8 decodes ~22 ms, +16 prompt tokens ~+33 ms; docs/kv-cache.md, Scheduling), so 2 d
  // prompt tokens keep a mixed step within ~3x a decode-only one at any concurrency, and the flag's
  // floor covers the few-decodes steps whose time is mostly reading the weights.
  return std::max(options_.max_prefill_tokens_while_decoding, 2 * decodes);
}

void Scheduler::PreemptNewest() {
  SM_CHECK(!running_.empty()) << "nothing to preempt";
  std::unique_ptr<Sequence> victim = std::move(running_.back());
  running_.pop_back();
  Release(victim.get());
  victim->num_computed = 0;
  ++victim->preemptions;
  waiting_.push_front(std::move(victim));
}

void Scheduler::Apply(const StepShape& shape, StepPlan* plan) {
  plan->seqs.clear();
  plan->mode = kernels::ExecMode::kParallel;
  plan->max_threads = 0;
  plan->parallel_threshold = 0;
  step_seqs_.clear();
  step_tokens_.clear();
  const Clock::time_point now = Clock::now();
  // Cached prefixes first, before any allocation could evict a block Schedule counted on.
  for (const StepShape::Entry& e : shape.entries) {
    if (!e.admitted) continue;
    Sequence* seq = e.seq;
    seq->num_computed =
        prefix_cache_.Acquire(seq->tokens, seq->request.mode, e.cached_blocks, &seq->block_table);
    if (seq->preemptions == 0 && seq->context_shifts == 0) {
      seq->cached_prompt_tokens = seq->num_computed;
    }
  }
  for (const StepShape::Entry& e : shape.entries) {
    Sequence* seq = e.seq;
    if (e.admitted) {
      SM_CHECK(!waiting_.empty() && waiting_.front().get() == seq) << "admission out of order";
      running_.push_back(std::move(waiting_.front()));
      waiting_.pop_front();
      if (seq->first_scheduled == Clock::time_point{}) seq->first_scheduled = now;
    }
    SM_CHECK(pool_->AllocateN(e.new_blocks, &seq->block_table)) << "schedule over-committed blocks";
    // A deterministic request makes the whole step deterministic: it is the slower path but its
    // results are valid for every request, while the reverse would break batch invariance.
    if (seq->request.mode == kernels::ExecMode::kDeterministic) {
      plan->mode = kernels::ExecMode::kDeterministic;
    }
    int mt = seq->request.max_threads;
    if (mt > 0 && (plan->max_threads == 0 || mt < plan->max_threads)) plan->max_threads = mt;
    // The most conservative request wins: a larger threshold keeps more ops on one thread.
    plan->parallel_threshold = std::max(plan->parallel_threshold, seq->request.parallel_threshold);
    plan->seqs.push_back(SliceOf(shape, e));
    step_seqs_.push_back(seq);
    step_tokens_.push_back(e.n_tokens);
    step_drafts_.push_back(e.draft);
    seq->spec.drafts_by_model = e.draft_by_model;
  }
  // What actually runs each sequence, once the step's mode and thread limit are settled.
  for (Sequence* seq : step_seqs_) seq->execution.Record(plan->mode, plan->max_threads);
  CountStep(shape);
}

SeqStep Scheduler::SliceOf(const StepShape& shape, const StepShape::Entry& e) {
  Sequence* seq = e.seq;
  const std::span<const int32_t> blocks(seq->block_table);
  if (e.draft == 0) {
    if (options_.speculation.any() && seq->num_pending() == 1) {
      seq->spec.controller.OnStepWithoutDraft();
    }
    std::span<const TokenId> all(seq->tokens);
    const bool last = seq->num_computed + e.n_tokens == seq->num_tokens();
    SeqStep step{all.subspan(seq->num_computed, e.n_tokens), seq->num_computed, blocks,
                 last && seq->request.embed == PoolingType::kNone};
    if (last) step.embed = seq->request.embed;
    return step;
  }
  // A verification step: the last accepted token, then the drafts, each with its logits.
  std::vector<TokenId>& feed = seq->spec.feed;
  feed.assign(1, seq->tokens.back());
  const auto drafts = shape.drafts.begin() + e.draft_begin;
  feed.insert(feed.end(), drafts, drafts + e.draft);
  return {std::span<const TokenId>(feed), seq->num_computed, blocks, true, 1 + e.draft};
}

void Scheduler::CountStep(const StepShape& shape) {
  constexpr double kWeight = 1.0 / 16;  // of the newest step in the recent averages
  int64_t tokens = 0;
  for (const StepShape::Entry& e : shape.entries) {
    tokens += e.n_tokens;
    // A decode feeds the one token sampled by the last step; all else is prefill.
    const Sequence& seq = *e.seq;
    const bool decode = seq.num_generated() > 0 && seq.num_pending() == 1;  // with any drafts
    (decode ? totals_.decode_tokens : totals_.prefill_tokens) += e.n_tokens;
  }
  const double seqs = static_cast<double>(shape.entries.size());
  if (totals_.steps++ == 0) {
    totals_.tokens_per_step = static_cast<double>(tokens);
    totals_.sequences_per_step = seqs;
  } else {
    totals_.tokens_per_step += kWeight * (static_cast<double>(tokens) - totals_.tokens_per_step);
    totals_.sequences_per_step += kWeight * (seqs - totals_.sequences_per_step);
  }
}

std::span<SampleSlot> Scheduler::Advance() {
  slots_.clear();
  for (size_t i = 0; i < step_seqs_.size(); ++i) {
    Sequence* seq = step_seqs_[i];
    // Drafts' positions count only once verified (Update).
    seq->num_computed += step_tokens_[i] - step_drafts_[i];
    if (options_.encoder) {  // no cache: the input is computed and embedded
      embed_rows_.push_back(static_cast<int>(i));
      continue;
    }
    prefix_cache_.OnComputed(seq->tokens, seq->num_computed, seq->request.mode, seq->block_table);
    prefix_cache_.ReleaseBehindWindow(options_.release_window, seq->num_computed, &seq->block_table,
                                      &seq->released_blocks);
    if (seq->num_pending() != 0) continue;
    if (seq->request.embed != PoolingType::kNone) {
      embed_rows_.push_back(static_cast<int>(i));
      continue;
    }
    if (seq->num_generated() == 0) {  // the prompt is in the KV cache now
      cached_prefixes_.Record(seq->request.prefix_keys, seq->tokens, seq->num_prompt_tokens,
                              seq->block_table, *pool_);
    }
    slots_.push_back(SampleSlot{&seq->picker, static_cast<int>(i), Pick{}});
  }
  return slots_;
}

void Scheduler::FinishEmbeddings(const EmbeddingAtFn& embedding) {
  if (embed_rows_.empty()) return;
  SM_CHECK(embedding != nullptr) << "a step embedded inputs but nothing reads their embeddings";
  const Clock::time_point now = Clock::now();
  for (int row : embed_rows_) {
    Sequence* seq = step_seqs_[row];
    seq->first_token = seq->last_token = now;  // the input's time to its result
    FinishEvent event = seq->MakeFinishEvent(FinishReason::kStop);
    const std::span<const float> v = embedding(row);
    event.embedding.assign(v.begin(), v.end());
    output_.AddFinish(seq->sink, seq->id, std::move(event));
    seq->sink = nullptr;
    Release(seq);
    seq->finished = true;
  }
  embed_rows_.clear();
}

void Scheduler::Update(std::span<const SampleSlot> slots, const LogitsAtFn& logits) {
  SM_DCHECK(slots.data() == slots_.data() && slots.size() == slots_.size());
  const Clock::time_point now = Clock::now();
  for (const SampleSlot& slot : slots) {
    Sequence* seq = step_seqs_[slot.row];
    const int draft = step_drafts_[slot.row];
    // Counted first: the first pick may already finish the request.
    seq->spec.drafted += draft;
    TotalsOf(*seq).drafted += static_cast<uint64_t>(draft);
    Emit(seq, slot.pick, now);
    if (draft == 0) continue;
    SM_CHECK(logits != nullptr) << "a step verified drafts but Update got no logits rows";
    VerifyDraft(seq, slot.row, draft, slot.pick, logits, now);
  }
  step_seqs_.clear();
  step_tokens_.clear();
  step_drafts_.clear();
  slots_.clear();
  ShiftContexts();
  std::erase_if(running_, [](const auto& s) { return s == nullptr || s->finished; });
}

// The picks are drawn as plain decoding would draw them (the same picker, row after row, each
// draw indexed by its own position), so the drafts change which steps run, never the tokens: a
// draft is accepted when the pick at its position is the draft itself.
void Scheduler::VerifyDraft(Sequence* seq, int row, int draft, Pick pick, const LogitsAtFn& logits,
                            Clock::time_point now) {
  const TokenId* drafts = seq->spec.feed.data() + 1;
  int accepted = 0;
  while (!seq->finished && accepted < draft && pick.token == drafts[accepted]) {
    ++accepted;
    ++seq->spec.accepted;
    ++TotalsOf(*seq).accepted;
    // The accepted draft's K/V, written this step, are its position's: a block it fills is
    // named now, before a finish below releases the sequence's blocks.
    ++seq->num_computed;
    prefix_cache_.OnComputed(seq->tokens, seq->num_computed, seq->request.mode, seq->block_table);
    pick = seq->picker.Next(logits(row, accepted));
    Emit(seq, pick, now);
  }
  seq->spec.controller.OnVerified(draft, accepted);
  if (seq->finished) return;
  // Rejected drafts' K/V stay only past the accepted positions, which the next steps overwrite;
  // blocks holding nothing accepted go back to the pool unnamed.
  ReleaseBlocksPast(seq, BlocksFor(seq->num_tokens()));
}

void Scheduler::ReleaseBlocksPast(Sequence* seq, int keep) {
  while (static_cast<int>(seq->block_table.size()) > keep) {
    pool_->Release(seq->block_table.back());
    seq->block_table.pop_back();
  }
}

// Recompute, not re-rotation: the shifted window goes back to the waiting queue's front like a
// preempted sequence and is prefilled again from position 0, so its K/V are exactly those of a
// fresh prompt of the kept tokens (deterministic requests stay batch-invariant), and every block
// is only ever hashed for the tokens and positions it was computed at: the released blocks stay
// valid prefix-cache entries of the old window, and the kept leading blocks are found again.
void Scheduler::ShiftContexts() {
  // Newest first, each pushed to the front: they keep their admission order in the queue.
  for (auto it = running_.rbegin(); it != running_.rend(); ++it) {
    Sequence* seq = it->get();
    if (seq->finished || !seq->needs_context_shift()) continue;
    Release(seq);
    seq->ShiftContext();
    ++context_shifts_total_;
    waiting_.push_front(std::move(*it));
  }
}

void Scheduler::Emit(Sequence* seq, const Pick& pick, Clock::time_point now) {
  if (pick.token < 0) {
    Finish(seq, FinishReason::kNone,
           shared::FailedPrecondition(
               "response_format: no token of the model's vocabulary continues the "
               "JSON object after " +
               std::to_string(seq->num_generated()) + " generated tokens"));
    return;
  }
  const TokenPicker& picker = seq->picker;
  seq->AppendToken(pick.token, now);
  ++generation_tokens_total_;
  // EOS itself is not part of the output.
  const size_t n = pick.reason == FinishReason::kEos ? 0 : 1;
  // A token past the context shifts it at the end of this step (ShiftContexts); the stream says so
  // with this token.
  const int shifts = pick.reason == FinishReason::kNone && seq->needs_context_shift() ? 1 : 0;
  if (n > 0 || !picker.text().empty()) {
    output_.AddTokens(
        seq->sink, seq->id, std::span<const TokenId>(&seq->tokens.back(), n), picker.text(),
        std::span<const SampleLogprobs>(&picker.logprobs(), picker.wants_logprobs() ? n : 0),
        shifts);
  }
  if (pick.reason != FinishReason::kNone) Finish(seq, pick.reason, shared::Status::Ok());
}

void Scheduler::Finish(Sequence* seq, FinishReason reason, shared::Status status) {
  FinishEvent event = seq->MakeFinishEvent(reason);
  event.status = std::move(status);
  output_.AddFinish(seq->sink, seq->id, std::move(event));
  seq->sink = nullptr;
  Release(seq);
  seq->finished = true;
}

void Scheduler::Release(Sequence* seq) {
  prefix_cache_.Release(&seq->block_table);
  // The draft model's K/V go too: a finished sequence needs none, a shifted one recomputes.
  seq->spec.draft_model.Clear();
  seq->released_blocks = 0;
}

void Scheduler::PublishStats(SchedulerStats* stats) const {
  using enum shared::WorkerStat;
  stats->Set(kRunning, static_cast<double>(running_.size()));
  stats->Set(kWaiting, static_cast<double>(waiting_.size()));
  stats->Set(kKvPagesUsed, pool_->num_used());
  stats->Set(kKvPagesCapacity, pool_->num_total());
  stats->Set(kRequests, static_cast<double>(requests_total_));
  stats->Set(kPromptTokens, static_cast<double>(prompt_tokens_total_));
  stats->Set(kGenerationTokens, static_cast<double>(generation_tokens_total_));
  stats->Set(kKvPagesCached, pool_->num_cached());
  stats->Set(kKvTokensStored, static_cast<double>(pool_->tokens_in_used_blocks()));
  stats->Set(kKvTokenSlots, static_cast<double>(int64_t{pool_->num_used()} * block_size_));
  const PrefixCacheCounters& c = prefix_cache_.counters();
  stats->Set(kPrefixCacheLookups, static_cast<double>(c.lookups));
  stats->Set(kPrefixCacheHits, static_cast<double>(c.hits));
  stats->Set(kPrefixCacheHitBlocks, static_cast<double>(c.hit_blocks));
  stats->Set(kPrefixCacheHitTokens, static_cast<double>(c.hit_tokens));
  stats->Set(kPrefixCacheEvictions, static_cast<double>(pool_->evictions()));
  stats->Set(kSteps, static_cast<double>(totals_.steps));
  stats->Set(kPrefillTokens, static_cast<double>(totals_.prefill_tokens));
  stats->Set(kDecodeTokens, static_cast<double>(totals_.decode_tokens));
  stats->Set(kTokensPerStep, totals_.tokens_per_step);
  stats->Set(kSequencesPerStep, totals_.sequences_per_step);
  stats->Set(kContextShifts, static_cast<double>(context_shifts_total_));
  stats->Set(kNgramDraftTokens, static_cast<double>(ngram_totals_.drafted));
  stats->Set(kNgramAcceptedTokens, static_cast<double>(ngram_totals_.accepted));
  stats->Set(kDraftModelDraftTokens, static_cast<double>(model_totals_.drafted));
  stats->Set(kDraftModelAcceptedTokens, static_cast<double>(model_totals_.accepted));
  std::array<uint64_t, SchedulerStats::kMaxPrefixKeys> keys;
  const int n = cached_prefixes_.Live(*pool_, keys);
  for (int i = 0; i < n; ++i)
    stats->cached_prefix_keys[i].store(keys[i], std::memory_order_relaxed);
  stats->cached_prefix_key_count.store(static_cast<uint32_t>(n), std::memory_order_relaxed);
}

}  // namespace smallmind::worker
