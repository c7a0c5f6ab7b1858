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
      sampler(request.sampling, vocab_size),
      json(request.json_schema != nullptr ? JsonPrefix(request.json_schema.get()) : JsonPrefix()),
      stop(request.stopping),
      detokenizer(tokenizer, request.prompt.empty() ? -1 : request.prompt.back()),
      sink(sink) {
  size_t window = request.prompt.size() + request.stopping.max_new_tokens + 1;
  if (request.overflow.shift) {
    window = std::min(window, static_cast<size_t>(request.overflow.context_length) + 1);
  }
  tokens.reserve(window);
  tokens = request.prompt;
  sampler.AddPromptTokens(request.prompt);
  text_scratch.reserve(64);
  emit_scratch.reserve(256);
}

FinishReason Sequence::AcceptToken(TokenId id, Clock::time_point now) {
  sampler.Accept(id);
  if (num_generated() == 0) first_token = now;
  last_token = now;
  tokens.push_back(id);
  text_scratch.clear();
  detokenizer.Push(id, &text_scratch);
  emit_scratch.clear();
  FinishReason reason = stop.OnToken(id, text_scratch, &emit_scratch);
  bool ends = reason == FinishReason::kLength || reason == FinishReason::kEos;
  if (request.json_vocab != nullptr && reason != FinishReason::kStop) {
    // The draw only offered tokens that continue the object (MaskJsonLogits), so this takes them.
    json.Feed(request.json_vocab->Of(id));
    if (json.complete()) {  // the object is whole: generation ends, all its text goes out
      if (reason == FinishReason::kNone) stop.Finish(&emit_scratch);
      reason = FinishReason::kStop;
      ends = true;
    }
  }
  // The stream ends here: an incomplete code point left over becomes U+FFFD.
  if (ends) detokenizer.Flush(&emit_scratch);
  return reason;
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
