#include "worker/sample/token_picker.h"

#include <utility>

namespace smallmind::worker {

TokenPicker::TokenPicker(const PickerOptions& options, std::span<const TokenId> prompt,
                         const Tokenizer& tokenizer, int vocab_size)
    : sampler_(options.sampling, vocab_size),
      json_vocab_(options.json_vocab),
      json_schema_(options.json_schema),
      json_(json_schema_ != nullptr ? JsonPrefix(json_schema_.get()) : JsonPrefix()),
      stop_(options.stopping),
      detokenizer_(tokenizer, prompt.empty() ? -1 : prompt.back()) {
  sampler_.AddPromptTokens(prompt);
  token_text_.reserve(64);
  emit_.reserve(256);
}

Pick TokenPicker::Next(std::span<float> logits) {
  emit_.clear();
  if (json_vocab_ != nullptr && MaskJsonLogits(json_, *json_vocab_, logits) == 0) {
    return Pick{};  // no token continues the object: the scheduler fails the request
  }
  Pick pick;
  pick.token = sampler_.Sample(logits, wants_logprobs() ? &logprobs_ : nullptr);
  pick.reason = Accept(pick.token);
  return pick;
}

FinishReason TokenPicker::Accept(TokenId id) {
  sampler_.Accept(id);
  token_text_.clear();
  detokenizer_.Push(id, &token_text_);
  FinishReason reason = stop_.OnToken(id, token_text_, &emit_);
  bool ends = reason == FinishReason::kLength || reason == FinishReason::kEos;
  if (json_vocab_ != nullptr && reason != FinishReason::kStop) {
    // The draw only offered tokens that continue the object (MaskJsonLogits), so this takes them.
    json_.Feed(json_vocab_->Of(id));
    if (json_.complete()) {  // the object is whole: generation ends, all its text goes out
      if (reason == FinishReason::kNone) stop_.Finish(&emit_);
      reason = FinishReason::kStop;
      ends = true;
    }
  }
  // The stream ends here: an incomplete code point left over becomes U+FFFD.
  if (ends) detokenizer_.Flush(&emit_);
  return reason;
}

}  // namespace smallmind::worker
