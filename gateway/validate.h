// Request validation: GenerateRequest -> ValidatedRequest (STYLE §8, parse don't validate). Called
// by the inference service on each Generate before any worker is touched. Pure functions;
// thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "shared/status.h"
#include "smallmind/v1/inference.pb.h"

namespace smallmind::gateway {

// What validation needs to know about the served model (from the first ready worker's ModelInfo).
struct ModelLimits {
  uint32_t vocab_size = 0;
  uint32_t context_length = 0;
};

// Documented limits of GenerateRequest fields (inference.proto).
inline constexpr float kMaxTemperature = 100.0f;
inline constexpr float kMaxRepetitionPenalty = 10.0f;
inline constexpr float kMaxAbsPenalty = 2.0f;
inline constexpr uint32_t kMaxLogprobs = 20;
inline constexpr int kMaxStopStrings = 16;
inline constexpr size_t kMaxStopBytes = 256;
inline constexpr uint32_t kDefaultMaxNewTokens = 256;
// Longer caller ids are refused so that they stay readable in logs.
inline constexpr size_t kMaxRequestIdBytes = 128;

// A GenerateRequest whose every field is in range and whose defaults are filled in: temperature,
// top_p and repetition_penalty set, max_new_tokens > 0, request_id non-empty. Only Validate makes
// one.
class ValidatedRequest {
 public:
  const smallmind::v1::GenerateRequest& proto() const { return request_; }
  const std::string& request_id() const { return request_.request_id(); }
  // Prompt length in tokens when the prompt came as ids; 0 for a text prompt (the worker
  // tokenizes).
  size_t prompt_token_count() const { return request_.prompt_token_ids().ids_size(); }

 private:
  friend shared::Result<ValidatedRequest> Validate(const smallmind::v1::GenerateRequest&,
                                                   const ModelLimits&, std::string_view);
  ValidatedRequest() = default;
  smallmind::v1::GenerateRequest request_;
};

// Checks every field against its documented range; the first bad field gives INVALID_ARGUMENT
// naming the field, its allowed range and the value received. `generated_id` becomes the
// request_id when the caller sent none.
shared::Result<ValidatedRequest> Validate(const smallmind::v1::GenerateRequest& request,
                                          const ModelLimits& limits, std::string_view generated_id);

}  // namespace smallmind::gateway
