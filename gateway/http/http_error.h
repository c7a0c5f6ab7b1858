// OpenAI-style errors of the HTTP door: a Status becomes an HTTP status and the body
// {"error": {"message", "type", "param", "code"}}. Messages from gateway/validate name proto
// fields ("sampling.top_p"); here they are rewritten to the OpenAI field the client sent ("top_p").
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "shared/status.h"

namespace smallmind::gateway::http {

struct HttpError {
  int status = 500;
  std::string message;
  std::string type;   // "invalid_request_error", "authentication_error", ...
  std::string param;  // the request field at fault; "" = null
  std::string code;   // a stable machine-readable code; "" = null
};

// 400 INVALID_ARGUMENT/FAILED_PRECONDITION, 401 UNAUTHENTICATED, 404 NOT_FOUND, 429
// RESOURCE_EXHAUSTED, 499 CANCELLED, 503 UNAVAILABLE, 504 DEADLINE_EXCEEDED, 500 for the rest
// (never a client's mistake). `param` is filled from the message when it names a known field.
HttpError ErrorFromStatus(const shared::Status& status);

// An error the HTTP layer itself raises (unknown route, wrong method, malformed JSON).
HttpError MakeError(int status, std::string message, std::string param = {}, std::string code = {});

// The JSON body, compact, newline-terminated.
std::string ErrorBody(const HttpError& error);

// "model" or "" when `message` starts with no known proto field name; rewrites that name in
// `message` to the OpenAI one (sampling.temperature -> temperature, stopping.max_new_tokens ->
// max_tokens, prompt_token_ids -> prompt, ...).
std::string RewriteFieldName(std::string& message);

}  // namespace smallmind::gateway::http
