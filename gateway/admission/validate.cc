#include "gateway/admission/validate.h"

#include <cmath>

#include <spdlog/fmt/fmt.h>

#include "shared/json_schema.h"

namespace smallmind::gateway {
namespace {

using shared::InvalidArgument;
using shared::kMaxAbsPenalty;
using shared::kMaxLogprobs;
using shared::kMaxRepetitionPenalty;
using shared::kMaxRequestIdBytes;
using shared::kMaxStopBytes;
using shared::kMaxStopStrings;
using shared::kMaxTemperature;
using shared::Status;
using smallmind::v1::GenerateRequest;

// "sampling.top_p must be in (0, 1], got 1.5": every message names field, range and value.
Status OutOfRange(std::string_view field, std::string_view range, float value) {
  return InvalidArgument(fmt::format("{} must be in {}, got {}", field, range, value));
}

// True when lo <= v <= hi (lo < v when open_low); NaN is never in range.
bool InRange(float v, float lo, float hi, bool open_low = false) {
  if (std::isnan(v)) return false;
  return (open_low ? v > lo : v >= lo) && v <= hi;
}

Status CheckPrompt(const GenerateRequest& r) {
  // An empty text is valid: the model generates from BOS alone (run.c with no prompt). Token ids
  // are checked by the worker, against the model's vocabulary and context.
  if (r.input_case() == GenerateRequest::INPUT_NOT_SET) {
    return InvalidArgument("exactly one of prompt or prompt_token_ids must be set, got neither");
  }
  return Status::Ok();
}

// top_k's upper bound is the vocabulary: the worker checks it.
Status CheckSampling(const smallmind::v1::SamplingOptions& s) {
  if (s.has_temperature() && !InRange(s.temperature(), 0, kMaxTemperature)) {
    return OutOfRange("sampling.temperature", fmt::format("[0, {}]", kMaxTemperature),
                      s.temperature());
  }
  if (s.has_top_p() && !InRange(s.top_p(), 0, 1, /*open_low=*/true)) {
    return OutOfRange("sampling.top_p", "(0, 1]", s.top_p());
  }
  if (!InRange(s.min_p(), 0, 1)) return OutOfRange("sampling.min_p", "[0, 1]", s.min_p());
  if (s.has_repetition_penalty() &&
      !InRange(s.repetition_penalty(), 0, kMaxRepetitionPenalty, /*open_low=*/true)) {
    return OutOfRange("sampling.repetition_penalty", fmt::format("(0, {}]", kMaxRepetitionPenalty),
                      s.repetition_penalty());
  }
  if (!InRange(s.presence_penalty(), -kMaxAbsPenalty, kMaxAbsPenalty)) {
    return OutOfRange("sampling.presence_penalty",
                      fmt::format("[{}, {}]", -kMaxAbsPenalty, kMaxAbsPenalty),
                      s.presence_penalty());
  }
  if (!InRange(s.frequency_penalty(), -kMaxAbsPenalty, kMaxAbsPenalty)) {
    return OutOfRange("sampling.frequency_penalty",
                      fmt::format("[{}, {}]", -kMaxAbsPenalty, kMaxAbsPenalty),
                      s.frequency_penalty());
  }
  // The ids' bound is the vocabulary: the worker checks it.
  if (s.logit_bias_size() > shared::kMaxLogitBiasEntries) {
    return InvalidArgument(fmt::format("sampling.logit_bias must hold at most {} tokens, got {}",
                                       shared::kMaxLogitBiasEntries, s.logit_bias_size()));
  }
  for (const auto& [id, bias] : s.logit_bias()) {
    if (!InRange(bias, -shared::kMaxAbsLogitBias, shared::kMaxAbsLogitBias)) {
      return OutOfRange(
          fmt::format("sampling.logit_bias[{}]", id),
          fmt::format("[{}, {}]", -shared::kMaxAbsLogitBias, shared::kMaxAbsLogitBias), bias);
    }
  }
  return Status::Ok();
}

// max_new_tokens' upper bound is the context unless the context shifts, and n_keep's is half the
// context: the worker checks those.
Status CheckStopping(const smallmind::v1::StoppingOptions& s) {
  if (!smallmind::v1::ContextOverflow_IsValid(s.context_overflow())) {
    return InvalidArgument(
        fmt::format("stopping.context_overflow must be CONTEXT_OVERFLOW_FINISH (0) or "
                    "CONTEXT_OVERFLOW_SHIFT (1), got {}",
                    static_cast<int>(s.context_overflow())));
  }
  if (s.context_overflow() == smallmind::v1::CONTEXT_OVERFLOW_SHIFT &&
      s.max_new_tokens() > shared::kMaxNewTokensWithShift) {
    return InvalidArgument(fmt::format(
        "stopping.max_new_tokens must be in [1, {}] with context_overflow SHIFT (0 = {}), got {}",
        shared::kMaxNewTokensWithShift, shared::kDefaultMaxNewTokens, s.max_new_tokens()));
  }
  if (s.stop_size() > kMaxStopStrings) {
    return InvalidArgument(fmt::format("stopping.stop must hold at most {} strings, got {}",
                                       kMaxStopStrings, s.stop_size()));
  }
  for (int i = 0; i < s.stop_size(); ++i) {
    const size_t n = s.stop(i).size();
    if (n < 1 || n > kMaxStopBytes) {
      return InvalidArgument(
          fmt::format("stopping.stop[{}] must be [1, {}] bytes long, got {}", i, kMaxStopBytes, n));
    }
  }
  return Status::Ok();
}

Status CheckTopLevel(const GenerateRequest& r) {
  if (r.request_id().size() > kMaxRequestIdBytes) {
    return InvalidArgument(fmt::format("request_id must be [0, {}] bytes long, got {}",
                                       kMaxRequestIdBytes, r.request_id().size()));
  }
  if (r.logprobs() > kMaxLogprobs) {
    return InvalidArgument(
        fmt::format("logprobs must be in [0, {}] (0 = none), got {}", kMaxLogprobs, r.logprobs()));
  }
  static_assert(
      static_cast<int>(smallmind::v1::RESPONSE_FORMAT_TEXT) == shared::kFormatText &&
      static_cast<int>(smallmind::v1::RESPONSE_FORMAT_JSON_OBJECT) == shared::kFormatJsonObject &&
      static_cast<int>(smallmind::v1::RESPONSE_FORMAT_JSON_SCHEMA) == shared::kFormatJsonSchema);
  // The schema is compiled here too, so a bad one is refused before it waits for a worker.
  return shared::OutputConstraint(r.response_format(), r.json_schema()).status();
}

// Unset optional fields get their documented defaults, so the worker never guesses; the default
// max_new_tokens depends on the prompt's length in tokens, which only the worker knows.
void FillDefaults(std::string_view generated_id, GenerateRequest* r) {
  if (r->request_id().empty()) r->set_request_id(std::string(generated_id));
  auto* sampling = r->mutable_sampling();
  if (!sampling->has_temperature()) sampling->set_temperature(1.0f);
  if (!sampling->has_top_p()) sampling->set_top_p(1.0f);
  if (!sampling->has_repetition_penalty()) sampling->set_repetition_penalty(1.0f);
}

}  // namespace

shared::Result<ValidatedRequest> Validate(const GenerateRequest& request,
                                          std::string_view generated_id) {
  SM_RETURN_IF_ERROR(CheckTopLevel(request));
  SM_RETURN_IF_ERROR(CheckPrompt(request));
  SM_RETURN_IF_ERROR(CheckSampling(request.sampling()));
  SM_RETURN_IF_ERROR(CheckStopping(request.stopping()));
  ValidatedRequest out;
  out.request_ = request;
  FillDefaults(generated_id, &out.request_);
  return out;
}

}  // namespace smallmind::gateway
