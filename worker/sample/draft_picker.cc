#include "worker/sample/draft_picker.h"

namespace smallmind::worker {
namespace {

// The request's parameters less what only the output needs: a draft reports no logprobs.
SamplingParams DraftParams(SamplingParams params) {
  params.logprobs = 0;
  return params;
}

}  // namespace

DraftPicker::DraftPicker(const SamplingParams& params, int vocab_size)
    : sampler_(DraftParams(params), vocab_size) {}

void DraftPicker::Restart(const Sampler& target) { sampler_.CopyHistoryFrom(target); }

TokenId DraftPicker::Next(std::span<float> logits) {
  const TokenId id = sampler_.Sample(logits);
  sampler_.Accept(id);
  return id;
}

}  // namespace smallmind::worker
