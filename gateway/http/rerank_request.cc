#include "gateway/http/rerank_request.h"

#include <cstdint>

#include <spdlog/fmt/fmt.h>
#include <nlohmann/json.hpp>

#include "gateway/http/json_type_name.h"
#include "gateway/http/openai_request.h"

namespace smallmind::gateway::http {
namespace {

using Json = nlohmann::ordered_json;

constexpr size_t kMaxDocuments = 2048;  // as /v1/embeddings' inputs

const Json* Field(const Json& body, const char* name) {
  auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

bool ReadQuery(const Json& body, RerankBody* r, HttpError* error) {
  const Json* q = Field(body, "query");
  if (q == nullptr || !q->is_string() || q->get_ref<const std::string&>().empty()) {
    *error = MakeError(400,
                       q == nullptr ? "`query` is required (a non-empty string)"
                       : q->is_string()
                           ? "`query` must not be empty"
                           : fmt::format("`query` must be a string, got {}", JsonTypeName(*q)),
                       "query");
    return false;
  }
  r->rerank.set_query(q->get<std::string>());
  return true;
}

bool ReadDocuments(const Json& body, RerankBody* r, HttpError* error) {
  const Json* docs = Field(body, "documents");
  const auto fail = [&](std::string message) {
    *error = MakeError(400, std::move(message), "documents");
    return false;
  };
  if (docs == nullptr) return fail("`documents` is required (an array of strings)");
  if (!docs->is_array()) {
    return fail(
        fmt::format("`documents` must be an array of strings, got {}", JsonTypeName(*docs)));
  }
  if (docs->empty()) return fail("`documents` must not be empty");
  if (docs->size() > kMaxDocuments) {
    return fail(fmt::format("`documents` may hold at most {} documents, got {}", kMaxDocuments,
                            docs->size()));
  }
  for (size_t i = 0; i < docs->size(); i++) {
    const Json& d = (*docs)[i];
    if (!d.is_string()) {
      return fail(fmt::format("`documents[{}]` must be a string, got {}", i, JsonTypeName(d)));
    }
    if (d.get_ref<const std::string&>().empty()) {
      return fail(fmt::format("`documents[{}]` must not be empty", i));
    }
    r->rerank.add_documents(d.get<std::string>());
  }
  return true;
}

bool ReadOptions(const Json& body, RerankBody* r, HttpError* error) {
  if (const Json* v = Field(body, "top_n")) {
    if (!v->is_number_integer() || v->get<int64_t>() < 1 || v->get<int64_t>() > UINT32_MAX) {
      *error = MakeError(400, fmt::format("`top_n` must be a positive integer, got {}", v->dump()),
                         "top_n");
      return false;
    }
    r->rerank.set_top_n(v->get<uint32_t>());
  }
  for (const char* name : {"return_documents", "deterministic"}) {
    const Json* v = Field(body, name);
    if (v == nullptr) continue;
    if (!v->is_boolean()) {
      *error = MakeError(400, fmt::format("`{}` must be a boolean", name), name);
      return false;
    }
    if (name[0] == 'r') {
      r->rerank.set_return_documents(v->get<bool>());
    } else {
      r->rerank.mutable_runtime()->set_deterministic(v->get<bool>());
    }
  }
  return ReadModelAndUser(body, &r->model, error);
}

}  // namespace

std::optional<RerankBody> ParseRerankBody(std::string_view body, HttpError* error) {
  std::optional<Json> json = ParseJsonObject(body, error);
  if (!json) return std::nullopt;
  RerankBody r;
  if (!ReadQuery(*json, &r, error) || !ReadDocuments(*json, &r, error) ||
      !ReadOptions(*json, &r, error)) {
    return std::nullopt;
  }
  return r;
}

std::string FormatRerank(const smallmind::v1::RerankResponse& response, std::string_view model) {
  Json results = Json::array();
  for (const smallmind::v1::RerankResult& r : response.results()) {
    Json item{{"index", r.index()}, {"relevance_score", r.relevance_score()}};
    if (!r.document().empty()) item["document"] = Json{{"text", r.document()}};
    results.push_back(std::move(item));
  }
  const uint32_t tokens = response.usage().prompt_tokens();
  Json out{{"model", model},
           {"object", "list"},
           {"results", std::move(results)},
           {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}};
  return out.dump() + "\n";
}

}  // namespace smallmind::gateway::http
