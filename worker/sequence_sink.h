// SequenceSink: where one sequence's output is delivered on the gRPC side. Implemented by the
// Submit reactor; called only by the output pump thread, in the order the scheduler produced the
// events, never by the scheduler thread. After OnFinish no call comes, and the sink may be gone.
#pragma once

#include <span>
#include <string_view>

#include "worker/sample/sampler.h"
#include "worker/sched/step_output.h"
#include "worker/types/token_id.h"

namespace smallmind::worker {

// One step's output for one sequence; the views live until OnTokens returns.
struct TokenEvent {
  std::span<const TokenId> token_ids;        // tokens produced
  std::string_view text;                     // UTF-8 text they add (may be empty: held back)
  std::span<const SampleLogprobs> logprobs;  // one per token when logprobs were asked
  int context_shifts = 0;                    // context shifts right after these tokens
};

class SequenceSink {
 public:
  virtual ~SequenceSink() = default;
  virtual void OnTokens(const TokenEvent& event) = 0;
  // Exactly once, and the last call.
  virtual void OnFinish(const FinishEvent& event) = 0;
};

}  // namespace smallmind::worker
