#include "gateway/http/anthropic_error.h"

#include <nlohmann/json.hpp>

namespace smallmind::gateway::http {
namespace {

std::string Compact(const HttpError& error) {
  nlohmann::ordered_json body{
      {"type", "error"},
      {"error", {{"type", AnthropicErrorType(error.status)}, {"message", error.message}}}};
  // Replace invalid UTF-8 (a template message echoing client bytes) instead of throwing.
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

const char* AnthropicErrorType(int status) {
  switch (status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "request_too_large";
    case 429: return "rate_limit_error";
    case 503: return "overloaded_error";
    case 504: return "timeout_error";
    default: return status < 500 ? "invalid_request_error" : "api_error";
  }
}

std::string AnthropicErrorBody(const HttpError& error) { return Compact(error) + "\n"; }

std::string AnthropicErrorEvent(const HttpError& error) {
  return "event: error\ndata: " + Compact(error) + "\n\n";
}

}  // namespace smallmind::gateway::http
