// SequenceSink: where the scheduler sends one request's output. Implemented by the worker's Submit
// reactor. Called only from the scheduler thread; implementations must not block (they queue).
#pragma once

#include <span>
#include <string_view>

#include "shared/status.h"
#include "worker/sample/finish_reason.h"
#include "worker/sample/sampler.h"
#include "worker/types/token_id.h"

namespace smallmind::worker {

struct TokenEvent {
  std::span<const TokenId> token_ids;        // tokens produced this step
  std::string_view text;                     // UTF-8 text they add (may be empty: held back)
  std::span<const SampleLogprobs> logprobs;  // one per token when logprobs were asked
};

struct FinishEvent {
  shared::Status status;  // non-OK: the request failed (no FinishReason)
  FinishReason reason = FinishReason::kNone;
  int prompt_tokens = 0;
  int completion_tokens = 0;
  int cached_prompt_tokens = 0;
  double queue_ms = 0;
  double ttft_ms = 0;
  double prefill_tokens_per_s = 0;
  double decode_tokens_per_s = 0;
};

class SequenceSink {
 public:
  virtual ~SequenceSink() = default;
  virtual void OnTokens(const TokenEvent& event) = 0;
  // Exactly once, and the last call: after it the scheduler forgets the sink.
  virtual void OnFinish(const FinishEvent& event) = 0;
};

}  // namespace smallmind::worker
