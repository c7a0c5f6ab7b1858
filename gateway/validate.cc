#include "gateway/validate.h"

#include <algorithm>
#include <cmath>

#include <spdlog/fmt/fmt.h>

namespace smallmind::gateway {
namespace {

using shared::InvalidArgument;
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

Status CheckPrompt(const GenerateRequest& r, const ModelLimits& limits) {
  switch (r.input_case()) {
    case GenerateRequest::INPUT_NOT_SET:
      return InvalidArgument("exactly one of prompt or prompt_token_ids must be set, got neither");
    case GenerateRequest::kPrompt:
      // An empty text is valid: the model generates from BOS alone (run.c with no prompt). The
      // worker rejects it when add_bos=false leaves no token at all.
      return Status::Ok();
    case GenerateRequest::kPromptTokenIds: break;
  }
  const auto& ids = r.prompt_token_ids().ids();
  if (ids.empty() || static_cast<uint32_t>(ids.size()) > limits.context_length) {
    return InvalidArgument(
        fmt::format("prompt_token_ids must hold [1, {}] ids (the context length), got {}",
                    limits.context_length, ids.size()));
  }
  for (int i = 0; i < ids.size(); ++i) {
    if (ids[i] >= limits.vocab_size) {
      return InvalidArgument(
          fmt::format("prompt_token_ids[{}] must be in [0, {}) (the vocabulary), got {}", i,
                      limits.vocab_size, ids[i]));
    }
  }
  return Status::Ok();
}

Status CheckSampling(const smallmind::v1::SamplingOptions& s, const ModelLimits& limits) {
  if (s.has_temperature() && !InRange(s.temperature(), 0, kMaxTemperature)) {
    return OutOfRange("sampling.temperature", "[0, 100]", s.temperature());
  }
  if (s.top_k() > limits.vocab_size) {
    return InvalidArgument(fmt::format("sampling.top_k must be in [0, {}] (0 = off), got {}",
                                       limits.vocab_size, s.top_k()));
  }
  if (s.has_top_p() && !InRange(s.top_p(), 0, 1, /*open_low=*/true)) {
    return OutOfRange("sampling.top_p", "(0, 1]", s.top_p());
  }
  if (!InRange(s.min_p(), 0, 1)) return OutOfRange("sampling.min_p", "[0, 1]", s.min_p());
  if (s.has_repetition_penalty() &&
      !InRange(s.repetition_penalty(), 0, kMaxRepetitionPenalty, /*open_low=*/true)) {
    return OutOfRange("sampling.repetition_penalty", "(0, 10]", s.repetition_penalty());
  }
  if (!InRange(s.presence_penalty(), -kMaxAbsPenalty, kMaxAbsPenalty)) {
    return OutOfRange("sampling.presence_penalty", "[-2, 2]", s.presence_penalty());
  }
  if (!InRange(s.frequency_penalty(), -kMaxAbsPenalty, kMaxAbsPenalty)) {
    return OutOfRange("sampling.frequency_penalty", "[-2, 2]", s.frequency_penalty());
  }
  return Status::Ok();
}

Status CheckStopping(const smallmind::v1::StoppingOptions& s, const ModelLimits& limits) {
  if (s.max_new_tokens() > limits.context_length) {
    return InvalidArgument(fmt::format(
        "stopping.max_new_tokens must be in [1, {}] (the context length; 0 = {}), got {}",
        limits.context_length, kDefaultMaxNewTokens, s.max_new_tokens()));
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
  return Status::Ok();
}

// Unset optional fields get their documented defaults, so the worker never guesses.
void FillDefaults(const ModelLimits& limits, std::string_view generated_id, GenerateRequest* r) {
  if (r->request_id().empty()) r->set_request_id(std::string(generated_id));
  auto* sampling = r->mutable_sampling();
  if (!sampling->has_temperature()) sampling->set_temperature(1.0f);
  if (!sampling->has_top_p()) sampling->set_top_p(1.0f);
  if (!sampling->has_repetition_penalty()) sampling->set_repetition_penalty(1.0f);
  auto* stopping = r->mutable_stopping();
  if (stopping->max_new_tokens() == 0) {
    // The default is capped by the room the prompt leaves; a text prompt's length is known only
    // to the worker, which caps again.
    const uint32_t prompt = static_cast<uint32_t>(r->prompt_token_ids().ids_size());
    const uint32_t room = limits.context_length > prompt ? limits.context_length - prompt : 1;
    stopping->set_max_new_tokens(std::max<uint32_t>(1, std::min(kDefaultMaxNewTokens, room)));
  }
}

}  // namespace

shared::Result<ValidatedRequest> Validate(const GenerateRequest& request, const ModelLimits& limits,
                                          std::string_view generated_id) {
  SM_CHECK(limits.vocab_size > 0 && limits.context_length > 0) << "model limits not known";
  SM_RETURN_IF_ERROR(CheckTopLevel(request));
  SM_RETURN_IF_ERROR(CheckPrompt(request, limits));
  SM_RETURN_IF_ERROR(CheckSampling(request.sampling(), limits));
  SM_RETURN_IF_ERROR(CheckStopping(request.stopping(), limits));
  ValidatedRequest out;
  out.request_ = request;
  FillDefaults(limits, generated_id, &out.request_);
  return out;
}

}  // namespace smallmind::gateway
