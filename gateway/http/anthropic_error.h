// Anthropic-shaped errors of the HTTP door's /v1/messages routes: the same HttpError (status and
// message) as the OpenAI routes, written as Anthropic's {"type": "error", "error": {"type",
// "message"}} body or stream event, the error type named as Anthropic names it for the status.
// Pure functions; thread-safe.
#pragma once

#include <string>

#include "gateway/http/http_error.h"

namespace smallmind::gateway::http {

// invalid_request_error (400, 405, 499 and other 4xx), authentication_error (401),
// permission_error (403), not_found_error (404), request_too_large (413), rate_limit_error (429),
// overloaded_error (503: no worker, shutting down), timeout_error (504), api_error (other 5xx).
const char* AnthropicErrorType(int status);

// The body, compact, newline-terminated.
std::string AnthropicErrorBody(const HttpError& error);

// The `error` event of a stream under way.
std::string AnthropicErrorEvent(const HttpError& error);

}  // namespace smallmind::gateway::http
