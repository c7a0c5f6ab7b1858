// StepOutput: what the scheduler produced for the client streams, as plain data: per-sequence token
// events (ids, UTF-8 text delta, logprobs) and finish events (usage, timings, status), in the order
// they happened. Filled by the scheduler thread and handed whole through the OutputQueue to the
// gRPC side, which turns it into messages. Clear() keeps every buffer's capacity, so steady decode
// steps allocate nothing. One owner at a time; not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/exec_mode.h"
#include "shared/status.h"
#include "worker/sample/finish_reason.h"
#include "worker/sample/sampler.h"
#include "worker/types/token_id.h"

namespace smallmind::worker {

// Where one sequence's events are delivered. Defined on the gRPC side (worker/sequence_sink.h);
// the scheduler only carries the pointer and never calls it.
class SequenceSink;

// How a sequence ran, for its determinism receipt: the seed its sampler used and the kernels and
// thread limits of the steps that computed its tokens.
struct ExecutionRecord {
  uint64_t seed = 0;
  int deterministic_steps = 0;
  int parallel_steps = 0;
  int widest_threads = -1;  // the largest step thread limit: 0 = all the engine's; -1 = no step

  // One step ran the sequence with `mode` on at most `max_threads` threads (0 = all).
  void Record(kernels::ExecMode mode, int max_threads) {
    ++(mode == kernels::ExecMode::kDeterministic ? deterministic_steps : parallel_steps);
    const bool all = widest_threads == 0 || max_threads == 0;
    widest_threads = all ? 0 : (max_threads > widest_threads ? max_threads : widest_threads);
  }
};

// The end of one sequence's stream.
struct FinishEvent {
  shared::Status status;  // non-OK: the request failed (no FinishReason)
  FinishReason reason = FinishReason::kNone;
  int prompt_tokens = 0;
  int completion_tokens = 0;
  int cached_prompt_tokens = 0;
  int context_shifts = 0;
  // Speculative decoding: draft tokens verified for the request, and how many of them the target
  // accepted (each accepted draft is a generated token that cost no step of its own).
  int draft_tokens = 0;
  int accepted_draft_tokens = 0;
  double queue_ms = 0;
  double ttft_ms = 0;
  double prefill_tokens_per_s = 0;
  double decode_tokens_per_s = 0;
  ExecutionRecord execution;
  // An embedding sequence's pooled vector ([dim], not normalised); empty for generation.
  std::vector<float> embedding;
};

// One event of one sequence. Token events index the StepOutput's flat buffers; a finish event is
// the sequence's last.
struct OutputEvent {
  SequenceSink* sink = nullptr;  // the stream it belongs to (opaque here)
  uint64_t sequence_id = 0;
  uint32_t token_begin = 0;  // [token_begin, +token_count) in token_ids
  uint32_t token_count = 0;
  uint32_t text_begin = 0;  // [text_begin, +text_size) in text
  uint32_t text_size = 0;
  uint32_t logprob_begin = 0;  // [logprob_begin, +logprob_count) in logprobs; one per token or 0
  uint32_t logprob_count = 0;
  uint32_t context_shifts =
      0;                  // shifts right after these tokens (the next come from the new window)
  bool finished = false;  // a finish event: `finish` is set, the ranges are empty
  FinishEvent finish;
};

class StepOutput {
 public:
  // Tokens (possibly none, e.g. an EOS that only releases held text) and the text they add;
  // `context_shifts`: the sequence's context was shifted right after them.
  void AddTokens(SequenceSink* sink, uint64_t sequence_id, std::span<const TokenId> token_ids,
                 std::string_view text, std::span<const SampleLogprobs> logprobs,
                 int context_shifts = 0);
  void AddFinish(SequenceSink* sink, uint64_t sequence_id, FinishEvent finish);
  // Appends `other`'s events after this one's (the queue coalesces steps the reader has not taken).
  void Append(const StepOutput& other);
  // Drops the events and keeps the capacity.
  void Clear();
  void Swap(StepOutput& other) noexcept;

  bool empty() const { return events_.empty(); }
  std::span<const OutputEvent> events() const { return events_; }
  std::span<const TokenId> token_ids(const OutputEvent& e) const {
    return std::span<const TokenId>(token_ids_).subspan(e.token_begin, e.token_count);
  }
  std::string_view text(const OutputEvent& e) const {
    return std::string_view(text_).substr(e.text_begin, e.text_size);
  }
  std::span<const SampleLogprobs> logprobs(const OutputEvent& e) const {
    return std::span<const SampleLogprobs>(logprobs_).subspan(e.logprob_begin, e.logprob_count);
  }

 private:
  std::vector<OutputEvent> events_;       // in the order they happened
  std::vector<TokenId> token_ids_;        // [sum of token_count]
  std::string text_;                      // [sum of text_size] UTF-8 deltas, back to back
  std::vector<SampleLogprobs> logprobs_;  // [sum of logprob_count]
};

}  // namespace smallmind::worker
