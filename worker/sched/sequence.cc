#include "worker/sched/sequence.h"

#include <algorithm>

namespace smallmind::worker {
namespace {

double MillisBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

Sequence::Sequence(uint64_t id, SequenceRequest req, const Tokenizer& tokenizer, int vocab_size,
                   SequenceSink* sink)
    : id(id),
      request(std::move(req)),
      num_prompt_tokens(static_cast<int>(request.prompt.size())),
      picker(PickerOptions{request.sampling, request.stopping, request.json_vocab,
                           request.json_schema},
             request.prompt, tokenizer, vocab_size),
      sink(sink) {
  size_t window = request.prompt.size() + request.stopping.max_new_tokens + 1;
  if (request.overflow.shift) {
    window = std::min(window, static_cast<size_t>(request.overflow.context_length) + 1);
  }
  tokens.reserve(window);
  tokens = request.prompt;
}

void Sequence::AppendToken(TokenId id, Clock::time_point now) {
  if (num_generated() == 0) first_token = now;
  last_token = now;
  tokens.push_back(id);
}

void Sequence::ShiftContext() {
  const int keep = std::min(request.overflow.n_keep, num_tokens());
  const int discard = (num_tokens() - keep) / 2;
  tokens.erase(tokens.begin() + keep, tokens.begin() + keep + discard);
  num_dropped += discard;
  num_computed = 0;
  ++context_shifts;
}

FinishEvent Sequence::MakeFinishEvent(FinishReason reason) const {
  FinishEvent event;
  event.reason = reason;
  event.prompt_tokens = num_prompt_tokens;
  event.context_shifts = context_shifts;
  event.draft_tokens = spec.drafted;
  event.accepted_draft_tokens = spec.accepted;
  event.execution = execution;
  event.execution.seed = request.sampling.seed;
  event.cached_prompt_tokens = std::min(cached_prompt_tokens, num_prompt_tokens);
  event.completion_tokens = num_generated();
  // EOS ends the stream but is not part of the output.
  if (reason == FinishReason::kEos && event.completion_tokens > 0) --event.completion_tokens;
  const double gateway_ms = request.gateway_queue_ms;
  if (first_scheduled != Clock::time_point{}) {
    event.queue_ms = gateway_ms + MillisBetween(arrived, first_scheduled);
  }
  if (num_generated() > 0) {
    event.ttft_ms = gateway_ms + MillisBetween(arrived, first_token);
    double prefill_ms = MillisBetween(first_scheduled, first_token);
    if (prefill_ms > 0) event.prefill_tokens_per_s = 1000.0 * num_prompt_tokens / prefill_ms;
    double decode_ms = MillisBetween(first_token, last_token);
    if (num_generated() > 1 && decode_ms > 0) {
      event.decode_tokens_per_s = 1000.0 * (num_generated() - 1) / decode_ms;
    }
  }
  return event;
}

}  // namespace smallmind::worker
