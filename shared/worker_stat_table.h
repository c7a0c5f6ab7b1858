// The worker's scalar stats as one table: each row names a number the worker's scheduler publishes
// (worker/sched/scheduler_stats.h, indexed by WorkerStat), that WorkerStats.values carries over
// worker.proto (keyed by the row's name) and that the gateway renders as a Prometheus family
// labelled worker="i" (gateway/metrics/worker_metrics.cc). A new stat is one WorkerStat entry and
// one row here, plus the line that computes it. Constant data; thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace smallmind::shared {

// Indexes SchedulerStats' values and kWorkerStatTable (same order; checked below).
enum class WorkerStat : uint8_t {
  kRunning,
  kWaiting,
  kKvPagesUsed,
  kKvPagesCapacity,
  kKvPagesCached,
  kKvTokensStored,
  kKvTokenSlots,
  kRequests,
  kPromptTokens,
  kGenerationTokens,
  kPreemptions,
  kSteps,
  kPrefillTokens,
  kDecodeTokens,
  kTokensPerStep,
  kSequencesPerStep,
  kContextShifts,
  kPrefixCacheLookups,
  kPrefixCacheHits,
  kPrefixCacheHitBlocks,
  kPrefixCacheHitTokens,
  kPrefixCacheEvictions,
  kNgramDraftTokens,
  kNgramAcceptedTokens,
  kDraftModelDraftTokens,
  kDraftModelAcceptedTokens,
  kWeightsResidentBytes,
  kCount,
};
inline constexpr size_t kWorkerStatCount = static_cast<size_t>(WorkerStat::kCount);

// Prometheus' two scalar types: a gauge goes up and down, a counter only grows (from process start)
// and its name ends in "_total".
enum class StatKind : uint8_t { kGauge, kCounter };

struct WorkerStatDescriptor {
  WorkerStat id;
  std::string_view name;  // the Prometheus family and the WorkerStats.values key
  StatKind kind;
  std::string_view unit;  // what one unit counts ("sequences", "pages", "tokens", ...)
  std::string_view help;
};

inline constexpr std::array<WorkerStatDescriptor, kWorkerStatCount> kWorkerStatTable = [] {
  using enum WorkerStat;
  using enum StatKind;
  return std::array<WorkerStatDescriptor, kWorkerStatCount>{{
      {kRunning, "smallmind_worker_running_sequences", kGauge, "sequences",
       "Sequences in the worker's running batch"},
      {kWaiting, "smallmind_worker_waiting_sequences", kGauge, "sequences",
       "Sequences queued in the worker, not yet started"},
      {kKvPagesUsed, "smallmind_kv_pages_used", kGauge, "pages",
       "KV blocks referenced by the worker's running sequences"},
      {kKvPagesCapacity, "smallmind_kv_pages_capacity", kGauge, "pages",
       "KV blocks in the worker's pool (its capacity)"},
      {kKvPagesCached, "smallmind_kv_pages_cached", kGauge, "pages",
       "Unreferenced KV blocks kept for prefix reuse (evictable)"},
      {kKvTokensStored, "smallmind_kv_tokens_stored", kGauge, "tokens",
       "Positions holding K/V in used blocks (a shared block once)"},
      {kKvTokenSlots, "smallmind_kv_token_slots", kGauge, "tokens",
       "Positions the used blocks could hold; tokens_stored / token_slots is KV utilisation"},
      {kRequests, "smallmind_worker_requests_total", kCounter, "requests",
       "Requests the worker process admitted"},
      {kPromptTokens, "smallmind_worker_prompt_tokens_total", kCounter, "tokens",
       "Prompt tokens the worker process admitted (cached ones included)"},
      {kGenerationTokens, "smallmind_worker_generation_tokens_total", kCounter, "tokens",
       "Tokens the worker process generated"},
      {kPreemptions, "smallmind_worker_preemptions_total", kCounter, "sequences",
       "Sequences preempted (blocks freed, recomputed later) because the KV pool ran out"},
      {kSteps, "smallmind_worker_steps_total", kCounter, "steps",
       "Engine steps (one pass over the running batch)"},
      {kPrefillTokens, "smallmind_worker_prefill_tokens_total", kCounter, "tokens",
       "Positions computed as prefill (prompt chunks, recomputation; prefix-cache hits excluded)"},
      {kDecodeTokens, "smallmind_worker_decode_tokens_total", kCounter, "tokens",
       "Positions computed as decode (one per sequence a step)"},
      {kTokensPerStep, "smallmind_worker_tokens_per_step", kGauge, "tokens",
       "Tokens fed per step, recent average (about 16 steps)"},
      {kSequencesPerStep, "smallmind_worker_sequences_per_step", kGauge, "sequences",
       "Sequences per step (the batch size), recent average (about 16 steps)"},
      {kContextShifts, "smallmind_worker_context_shifts_total", kCounter, "shifts",
       "Context shifts (stopping.context_overflow = SHIFT)"},
      {kPrefixCacheLookups, "smallmind_prefix_cache_lookups_total", kCounter, "requests",
       "Admissions that looked for a cached prefix"},
      {kPrefixCacheHits, "smallmind_prefix_cache_hits_total", kCounter, "requests",
       "Admissions that reused at least one cached KV block"},
      {kPrefixCacheHitBlocks, "smallmind_prefix_cache_hit_blocks_total", kCounter, "pages",
       "Cached KV blocks reused instead of recomputed"},
      {kPrefixCacheHitTokens, "smallmind_prefix_cache_hit_tokens_total", kCounter, "tokens",
       "Prompt positions not recomputed thanks to the cache"},
      {kPrefixCacheEvictions, "smallmind_prefix_cache_evictions_total", kCounter, "pages",
       "Cached KV blocks evicted to make room"},
      {kNgramDraftTokens, "smallmind_worker_ngram_draft_tokens_total", kCounter, "tokens",
       "Draft tokens the n-gram (prompt lookup) drafter proposed and the model verified"},
      {kNgramAcceptedTokens, "smallmind_worker_ngram_accepted_tokens_total", kCounter, "tokens",
       "Of those, the ones the model accepted (tokens generated without a step of their own)"},
      {kDraftModelDraftTokens, "smallmind_worker_draft_model_draft_tokens_total", kCounter,
       "tokens", "Draft tokens the draft model (--draft-model) proposed and the model verified"},
      {kDraftModelAcceptedTokens, "smallmind_worker_draft_model_accepted_tokens_total", kCounter,
       "tokens",
       "Of those, the ones the model accepted (tokens generated without a step of their own)"},
      {kWeightsResidentBytes, "smallmind_worker_weights_resident_bytes", kGauge, "bytes",
       "Bytes of the model's weights resident in the worker now (mapped file pages and packed "
       "copies; experts no token has used are not), measured when the stats are read"},
  }};
}();

constexpr bool WorkerStatTableInOrder() {
  for (size_t i = 0; i < kWorkerStatCount; ++i) {
    if (static_cast<size_t>(kWorkerStatTable[i].id) != i) return false;
  }
  return true;
}
static_assert(WorkerStatTableInOrder(), "kWorkerStatTable rows must follow WorkerStat's order");

constexpr const WorkerStatDescriptor& Describe(WorkerStat stat) {
  return kWorkerStatTable[static_cast<size_t>(stat)];
}

// The value of `stat` in a WorkerStats.values map (protobuf's Map<string, double>, or any map
// with find/end keyed by std::string), 0 when the worker did not send it.
template <typename Map>
double ReadWorkerStat(const Map& values, WorkerStat stat) {
  const auto it = values.find(std::string(Describe(stat).name));
  return it == values.end() ? 0.0 : it->second;
}

}  // namespace smallmind::shared
