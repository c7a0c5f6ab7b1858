// TokenPicker: everything that turns one request's logits into its next token and the text it
// releases: the JSON output constraint, the sampler (bias, penalties, temperature, truncation,
// the seeded draw), the detokenizer and the stop checks. One per request (a Sequence owns it);
// used by the sampling stage (SampleStep) on one thread at a time; not thread-safe.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "shared/json_schema.h"
#include "worker/sample/finish_reason.h"
#include "worker/sample/json_constraint.h"
#include "worker/sample/sampler.h"
#include "worker/sample/stop_checker.h"
#include "worker/tokenizer/detokenizer.h"
#include "worker/tokenizer/token_bytes.h"

namespace smallmind::worker {

// What a request asks of its output, already validated.
struct PickerOptions {
  SamplingParams sampling;
  StopConfig stopping;
  // response_format JSON_OBJECT or JSON_SCHEMA: the model's token bytes, for the constraint
  // (MaskJsonLogits before each draw, JsonPrefix fed each token); null: any text. Outlives this.
  const TokenBytes* json_vocab = nullptr;
  // JSON_SCHEMA: the compiled schema the object must follow (null with json_vocab: any object).
  std::shared_ptr<const shared::JsonSchema> json_schema;
};

// The outcome of one pick.
struct Pick {
  TokenId token = -1;  // -1: no token of the vocabulary continues the JSON object
  FinishReason reason = FinishReason::kNone;  // kNone: generation goes on
};

class TokenPicker {
 public:
  // `prompt` feeds the repetition penalty and the detokenizer's first-piece rule. Reserves every
  // buffer a pick uses, so Pick allocates nothing.
  TokenPicker(const PickerOptions& options, std::span<const TokenId> prompt,
              const Tokenizer& tokenizer, int vocab_size);

  // Draws the next token from `logits` [vocab_size] (modified in place: mask, bias, penalties),
  // records it, detokenizes it and checks the stop conditions. Afterwards text() is what the
  // stream may release now (stop-string prefixes held back, UTF-8 complete) and logprobs() the
  // draw's logprobs when the request asked for them.
  Pick Next(std::span<float> logits);

  const std::string& text() const { return emit_; }
  const SampleLogprobs& logprobs() const { return logprobs_; }
  bool wants_logprobs() const { return sampler_.params().logprobs > 0; }
  int num_generated() const { return sampler_.num_generated(); }
  // The sampler whose draws the picks make (a draft model draws with a copy: DraftPicker).
  const Sampler& sampler() const { return sampler_; }

 private:
  FinishReason Accept(TokenId id);

  Sampler sampler_;
  const TokenBytes* json_vocab_;
  std::shared_ptr<const shared::JsonSchema> json_schema_;  // keeps json_'s schema alive
  JsonPrefix json_;  // the output so far, when json_vocab_ constrains it
  StopChecker stop_;
  Detokenizer detokenizer_;
  std::string token_text_;  // this token's bytes, reused
  std::string emit_;        // text released this pick, reused
  SampleLogprobs logprobs_;
};

}  // namespace smallmind::worker
