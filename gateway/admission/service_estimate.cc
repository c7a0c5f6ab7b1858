#include "gateway/admission/service_estimate.h"

#include <algorithm>
#include <cmath>

#include "shared/request_limits.h"

namespace smallmind::gateway {
namespace {

void Blend(std::optional<double>& figure, double sample) {
  if (!std::isfinite(sample) || sample <= 0) return;
  figure = figure ? (1 - ServiceEstimate::kWeight) * *figure + ServiceEstimate::kWeight * sample
                  : sample;
}

}  // namespace

void ServiceEstimate::Observe(const ServiceSample& sample) {
  std::lock_guard<std::mutex> lock(mu_);
  Blend(prefill_rate_, sample.prefill_tokens_per_s);
  Blend(decode_rate_, sample.decode_tokens_per_s);
  if (sample.prompt_bytes > 0 && sample.prompt_tokens > 0) {
    Blend(tokens_per_byte_, static_cast<double>(sample.prompt_tokens) / sample.prompt_bytes);
  }
  const uint32_t max_new =
      sample.max_new_tokens > 0 ? sample.max_new_tokens : shared::kDefaultMaxNewTokens;
  if (sample.completion_tokens > 0) {
    Blend(completion_share_,
          std::min(1.0, static_cast<double>(sample.completion_tokens) / max_new));
  }
}

void ServiceEstimate::SetMaxPromptTokens(size_t tokens) {
  std::lock_guard<std::mutex> lock(mu_);
  max_prompt_tokens_ = tokens;
}

std::optional<std::chrono::milliseconds> ServiceEstimate::Estimate(
    const ServiceDemand& demand) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!prefill_rate_ || !decode_rate_) return std::nullopt;
  double prompt = static_cast<double>(demand.prompt_tokens);
  // Before any text prompt finished: about 4 bytes a token, as English BPE vocabularies give.
  if (prompt == 0) prompt = demand.prompt_bytes * tokens_per_byte_.value_or(0.25);
  if (max_prompt_tokens_ > 0) prompt = std::min(prompt, static_cast<double>(max_prompt_tokens_));
  const uint32_t max_new =
      demand.max_new_tokens > 0 ? demand.max_new_tokens : shared::kDefaultMaxNewTokens;
  const double generated = max_new * completion_share_.value_or(1);
  const double seconds = prompt / *prefill_rate_ + generated / *decode_rate_;
  return std::chrono::milliseconds(std::llround(seconds * 1000));
}

}  // namespace smallmind::gateway
