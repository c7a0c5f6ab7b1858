// Request validation: GenerateRequest -> ValidatedRequest (STYLE §8, parse don't validate): every
// field range that does not depend on the model (shared/request_limits.h). What depends on the
// model (token ids against the vocabulary, prompt and max_new_tokens against the context, top_k
// against the vocabulary) is checked once, by the worker that tokenizes (worker/request_builder).
// Called by the inference service on each Generate before any worker is touched. Pure functions;
// thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "shared/request_limits.h"
#include "shared/status.h"
#include "smallmind/v1/inference.pb.h"

namespace smallmind::gateway {

// A GenerateRequest whose every model-independent field is in range and whose defaults are filled
// in: temperature, top_p and repetition_penalty set, request_id non-empty (max_new_tokens 0 stays:
// the worker resolves it against the room the prompt leaves). Only Validate makes one.
class ValidatedRequest {
 public:
  const smallmind::v1::GenerateRequest& proto() const { return request_; }
  const std::string& request_id() const { return request_.request_id(); }
  // Prompt length in tokens when the prompt came as ids; 0 for a text prompt (the worker
  // tokenizes).
  size_t prompt_token_count() const { return request_.prompt_token_ids().ids_size(); }

 private:
  friend shared::Result<ValidatedRequest> Validate(const smallmind::v1::GenerateRequest&,
                                                   std::string_view);
  ValidatedRequest() = default;
  smallmind::v1::GenerateRequest request_;
};

// Checks every model-independent field against its documented range; the first bad field gives
// INVALID_ARGUMENT naming the field, its allowed range and the value received. `generated_id`
// becomes the request_id when the caller sent none.
shared::Result<ValidatedRequest> Validate(const smallmind::v1::GenerateRequest& request,
                                          std::string_view generated_id);

}  // namespace smallmind::gateway
