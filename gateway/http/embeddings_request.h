// POST /v1/embeddings in OpenAI's shape: the body -> an EmbedRequest (parse, don't validate), and
// the worker's EmbedResponse -> OpenAI's list of embedding objects (float arrays, or base64 of
// little-endian float32). `input` is a string, an array of strings, an array of token ids or an
// array of such arrays; `encoding_format` float | base64; `dimensions`; smallmind's `pooling`
// ("last": a generation model's last-token state) and `deterministic`. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "gateway/http/http_error.h"
#include "smallmind/v1/inference.pb.h"

namespace smallmind::gateway::http {

struct EmbeddingsRequest {
  smallmind::v1::EmbedRequest embed;
  std::string model;    // "" when absent (the served model)
  bool base64 = false;  // encoding_format "base64"
};

// nullopt + a 400 naming the field: a body that is no JSON object, `input` missing, empty (an
// empty string, array or id array) or of another type, more than 2048 inputs, `encoding_format`
// other than float/base64, `dimensions` not a positive integer, `pooling` other than
// "model"/"last", `model` or `user` not a string.
std::optional<EmbeddingsRequest> ParseEmbeddingsRequest(std::string_view body, HttpError* error);

// {"object": "list", "data": [{"object": "embedding", "index", "embedding"}...], "model",
// "usage": {"prompt_tokens", "total_tokens"}}, newline-terminated.
std::string FormatEmbeddings(const smallmind::v1::EmbedResponse& response, bool base64,
                             std::string_view model);

}  // namespace smallmind::gateway::http
