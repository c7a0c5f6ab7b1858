#include "gateway/http/http_error.h"

#include <array>
#include <utility>

#include <nlohmann/json.hpp>

namespace smallmind::gateway::http {
namespace {

struct FieldName {
  std::string_view proto;
  std::string_view openai;
};

// Longest first where one is a prefix of another.
constexpr std::array<FieldName, 15> kFieldNames{{
    {"sampling.temperature", "temperature"},
    {"sampling.top_k", "top_k"},
    {"sampling.top_p", "top_p"},
    {"sampling.min_p", "min_p"},
    {"sampling.repetition_penalty", "repetition_penalty"},
    {"sampling.presence_penalty", "presence_penalty"},
    {"sampling.frequency_penalty", "frequency_penalty"},
    {"sampling.logit_bias", "logit_bias"},
    {"sampling.seed", "seed"},
    {"stopping.max_new_tokens", "max_tokens"},
    {"stopping.stop", "stop"},
    {"prompt_token_ids", "prompt"},
    {"logprobs", "logprobs"},
    {"request_id", "user"},
    {"prompt", "prompt"},
}};

const char* TypeFor(int status) {
  switch (status) {
    case 400: return "invalid_request_error";
    case 401: return "authentication_error";
    case 404: return "not_found_error";
    case 405: return "invalid_request_error";
    case 413: return "invalid_request_error";
    case 429: return "rate_limit_error";
    case 499: return "cancelled";
    case 503: return "service_unavailable_error";
    case 504: return "timeout_error";
    default: return status < 500 ? "invalid_request_error" : "server_error";
  }
}

int HttpStatusFor(shared::StatusCode code) {
  using shared::StatusCode;
  switch (code) {
    case StatusCode::kOk: return 200;
    case StatusCode::kInvalidArgument:
    case StatusCode::kFailedPrecondition: return 400;
    case StatusCode::kUnauthenticated: return 401;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kResourceExhausted: return 429;
    case StatusCode::kCancelled: return 499;
    case StatusCode::kUnavailable: return 503;
    case StatusCode::kDeadlineExceeded: return 504;
    case StatusCode::kUnimplemented: return 501;
    case StatusCode::kInternal: return 500;
  }
  return 500;
}

}  // namespace

std::string RewriteFieldName(std::string& message) {
  for (const FieldName& f : kFieldNames) {
    if (!std::string_view(message).starts_with(f.proto)) continue;
    const char next = message.size() > f.proto.size() ? message[f.proto.size()] : ' ';
    if (next != ' ' && next != '[') continue;  // "prompt_tokens..." is not "prompt"
    message.replace(0, f.proto.size(), f.openai);
    return std::string(f.openai);
  }
  return {};
}

HttpError ErrorFromStatus(const shared::Status& status) {
  HttpError e;
  e.status = HttpStatusFor(status.code());
  e.type = TypeFor(e.status);
  e.message = status.message();
  if (e.status == 400) e.param = RewriteFieldName(e.message);
  if (status.code() == shared::StatusCode::kResourceExhausted) e.code = "queue_full";
  if (status.code() == shared::StatusCode::kUnauthenticated) e.code = "invalid_api_key";
  return e;
}

HttpError MakeError(int status, std::string message, std::string param, std::string code) {
  return HttpError{status, std::move(message), TypeFor(status), std::move(param), std::move(code)};
}

std::string ErrorBody(const HttpError& error) {
  nlohmann::ordered_json inner;
  inner["message"] = error.message;
  inner["type"] = error.type;
  inner["param"] =
      error.param.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(error.param);
  inner["code"] =
      error.code.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(error.code);
  nlohmann::ordered_json body;
  body["error"] = std::move(inner);
  // Replace invalid UTF-8 (a template message echoing client bytes) instead of throwing.
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace smallmind::gateway::http
