#include "gateway/http/embeddings_request.h"

#include <cstring>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "gateway/http/base64.h"
#include "gateway/http/json_type_name.h"
#include "gateway/http/openai_request.h"

namespace smallmind::gateway::http {
namespace {

using Json = nlohmann::ordered_json;

constexpr size_t kMaxInputs = 2048;  // OpenAI's limit on an `input` array

HttpError InputError(std::string message) { return MakeError(400, std::move(message), "input"); }

// A token-id array into `ids`; false (and *error) when an element is no non-negative integer.
bool ReadIds(const Json& array, smallmind::v1::TokenIds* ids, HttpError* error) {
  for (const Json& id : array) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > UINT32_MAX) {
      *error = InputError(
          fmt::format("`input` token ids must be non-negative integers, got {}", id.dump()));
      return false;
    }
    ids->add_ids(id.get<uint32_t>());
  }
  return true;
}

// `input` into request->inputs.
bool ReadInput(const Json& input, smallmind::v1::EmbedRequest* request, HttpError* error) {
  const auto empty = [&](const char* what) {
    *error = InputError(fmt::format("`input` must not be empty ({})", what));
    return false;
  };
  if (input.is_string()) {
    if (input.get_ref<const std::string&>().empty()) return empty("an empty string");
    request->add_inputs()->set_text(input.get<std::string>());
    return true;
  }
  if (!input.is_array()) {
    *error = InputError(fmt::format(
        "`input` must be a string, an array of strings, an array of token ids or an array of "
        "token-id arrays, got {}",
        JsonTypeName(input)));
    return false;
  }
  if (input.empty()) return empty("an empty array");
  if (input.size() > kMaxInputs) {
    *error = InputError(
        fmt::format("`input` may hold at most {} inputs, got {}", kMaxInputs, input.size()));
    return false;
  }
  if (input.front().is_number()) {  // one input of token ids
    return ReadIds(input, request->add_inputs()->mutable_token_ids(), error);
  }
  for (size_t i = 0; i < input.size(); i++) {
    const Json& item = input[i];
    if (item.is_string() && !item.get_ref<const std::string&>().empty()) {
      request->add_inputs()->set_text(item.get<std::string>());
    } else if (item.is_array() && !item.empty()) {
      if (!ReadIds(item, request->add_inputs()->mutable_token_ids(), error)) return false;
    } else if (item.is_string() || item.is_array()) {
      *error = InputError(fmt::format("`input[{}]` must not be empty", i));
      return false;
    } else {
      *error = InputError(fmt::format(
          "`input[{}]` must be a string or an array of token ids, got {}", i, JsonTypeName(item)));
      return false;
    }
  }
  return true;
}

// encoding_format, dimensions, pooling, model and user.
bool ReadOptions(const Json& body, EmbeddingsRequest* r, HttpError* error) {
  auto get = [&](const char* name) -> const Json* {
    auto it = body.find(name);
    return it == body.end() || it->is_null() ? nullptr : &*it;
  };
  if (const Json* v = get("encoding_format")) {
    if (!v->is_string() || (*v != "float" && *v != "base64")) {
      *error = MakeError(
          400, fmt::format("`encoding_format` must be \"float\" or \"base64\", got {}", v->dump()),
          "encoding_format");
      return false;
    }
    r->base64 = *v == "base64";
  }
  if (const Json* v = get("dimensions")) {
    if (!v->is_number_integer() || v->get<int64_t>() < 1 || v->get<int64_t>() > 1 << 20) {
      *error =
          MakeError(400, fmt::format("`dimensions` must be a positive integer, got {}", v->dump()),
                    "dimensions");
      return false;
    }
    r->embed.set_dimensions(v->get<uint32_t>());
  }
  if (const Json* v = get("pooling")) {
    if (!v->is_string() || (*v != "model" && *v != "last")) {
      *error =
          MakeError(400, fmt::format("`pooling` must be \"model\" or \"last\", got {}", v->dump()),
                    "pooling");
      return false;
    }
    r->embed.set_pooling(*v == "last" ? smallmind::v1::POOLING_LAST : smallmind::v1::POOLING_MODEL);
  }
  if (const Json* v = get("deterministic")) {
    if (!v->is_boolean()) {
      *error = MakeError(400, "`deterministic` must be a boolean", "deterministic");
      return false;
    }
    r->embed.mutable_runtime()->set_deterministic(v->get<bool>());
  }
  return ReadModelAndUser(body, &r->model, error);
}

}  // namespace

std::optional<EmbeddingsRequest> ParseEmbeddingsRequest(std::string_view body, HttpError* error) {
  std::optional<Json> json = ParseJsonObject(body, error);
  if (!json) return std::nullopt;
  EmbeddingsRequest r;
  auto input = json->find("input");
  if (input == json->end() || input->is_null()) {
    *error = InputError("`input` is required (a string or an array of them, or token ids)");
    return std::nullopt;
  }
  if (!ReadInput(*input, &r.embed, error) || !ReadOptions(*json, &r, error)) return std::nullopt;
  return r;
}

std::string FormatEmbeddings(const smallmind::v1::EmbedResponse& response, bool base64,
                             std::string_view model) {
  Json data = Json::array();
  for (int i = 0; i < response.embeddings_size(); i++) {
    const auto& values = response.embeddings(i).values();
    Json vector;
    if (base64) {  // the float32 bytes as stored: little-endian on every machine smallmind runs on
      std::vector<unsigned char> bytes(values.size() * sizeof(float));
      std::memcpy(bytes.data(), values.data(), bytes.size());
      vector = Base64Encode(bytes);
    } else {
      vector = Json::array();
      for (float v : values) vector.push_back(v);
    }
    data.push_back(Json{{"object", "embedding"}, {"index", i}, {"embedding", std::move(vector)}});
  }
  const uint32_t tokens = response.usage().prompt_tokens();
  Json out{{"object", "list"},
           {"data", std::move(data)},
           {"model", model},
           {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}};
  return out.dump() + "\n";
}

}  // namespace smallmind::gateway::http
