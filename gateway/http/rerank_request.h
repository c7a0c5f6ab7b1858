// POST /v1/rerank (and llama-server's /rerank, /v1/reranking) in the Jina / Cohere shape: the
// body -> a RerankRequest (parse, don't validate), and the gateway's RerankResponse -> {"model",
// "object": "list", "results": [{"index", "relevance_score", "document"?}], "usage"}. Pure
// functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gateway/http/http_error.h"
#include "smallmind/v1/inference.pb.h"

namespace smallmind::gateway::http {

struct RerankBody {
  smallmind::v1::RerankRequest rerank;
  std::string model;  // "" when absent (the served model)
};

// nullopt + a 400 naming the field: a body that is no JSON object; `query` missing, empty or no
// string; `documents` missing, not an array, empty, more than 2048, or holding an element that is
// no string or is empty (named by index); `top_n` not a positive integer; `return_documents` or
// `deterministic` not a boolean; `model` or `user` not a string.
std::optional<RerankBody> ParseRerankBody(std::string_view body, HttpError* error);

// The answer, newline-terminated: results in the response's order (sorted), each document as
// {"text": ...} when the request asked return_documents; usage's prompt and total tokens.
std::string FormatRerank(const smallmind::v1::RerankResponse& response, std::string_view model);

}  // namespace smallmind::gateway::http
