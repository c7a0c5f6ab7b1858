// How long a request will keep a worker slot, learnt from the requests that finished: the
// admission queue's clock for deadline-aware refusal and the retry hint (README "Admission").
// Fed by RequestRelay when a worker call ends, read by AdmissionQueue. Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>

namespace smallmind::gateway {

// What one finished request tells about the workers' speed (from its last message).
struct ServiceSample {
  uint32_t prompt_tokens = 0;       // usage.prompt_tokens
  size_t prompt_bytes = 0;          // a text prompt's length; 0 when it came as token ids
  uint32_t completion_tokens = 0;   // usage.completion_tokens
  uint32_t max_new_tokens = 0;      // what it asked for (0 = the default)
  double prefill_tokens_per_s = 0;  // timings, as the worker measured them
  double decode_tokens_per_s = 0;
};

// What a request is expected to cost, given its prompt and max_new_tokens.
struct ServiceDemand {
  size_t prompt_tokens = 0;  // token ids given, or 0 with a text prompt of `prompt_bytes`
  size_t prompt_bytes = 0;
  uint32_t max_new_tokens = 0;  // 0 = the default (shared/request_limits.h)
};

class ServiceEstimate {
 public:
  // Exponentially weighted: each sample moves the figures by this fraction.
  static constexpr double kWeight = 0.2;

  void Observe(const ServiceSample& sample);
  // The served model's context: a prompt counts as at most this many tokens. A longer one is
  // refused by the worker before it is tokenized (it never holds a slot for its length), so a
  // 7 MB prompt must reach that refusal (INVALID_ARGUMENT, final) instead of being refused here
  // as DEADLINE_EXCEEDED (which invites a retry) on an estimate of a million tokens' prefill.
  void SetMaxPromptTokens(size_t tokens);
  // The expected time `demand` holds a worker slot: its prompt tokens (text prompts converted
  // at the measured tokens per byte) at the measured prefill rate, plus max_new_tokens times the
  // measured fraction of max_new_tokens requests use, at the measured per-stream decode rate.
  // std::nullopt until a request with both rates has finished.
  std::optional<std::chrono::milliseconds> Estimate(const ServiceDemand& demand) const;

 private:
  mutable std::mutex mu_;
  // Guarded by mu_; unset until the first sample that has them.
  std::optional<double> prefill_rate_;      // tokens per second
  std::optional<double> decode_rate_;       // tokens per second per stream
  std::optional<double> tokens_per_byte_;   // text prompts
  std::optional<double> completion_share_;  // completion_tokens / max_new_tokens, in (0, 1]
  size_t max_prompt_tokens_ = 0;            // 0 = not known yet
};

}  // namespace smallmind::gateway
