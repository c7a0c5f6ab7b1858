// HttpApi: the routes of the HTTP door and their handlers: OpenAI's /v1/completions,
// /v1/chat/completions, /v1/embeddings and /v1/models, llama-server's /v1/rerank, Anthropic's
// /v1/messages (+ count_tokens), /health, /metrics and /stats, the web chat at /
// (gateway/http/web), and llama.cpp's /apply-template, /tokenize and /detokenize. Checks the API
// key (the gateway's key store, as on the gRPC port), turns bodies into validated requests and
// hands generation to RelayedCompletion. Built by HttpDoor once the model is known; Handle runs on
// connection strands concurrently. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/admission/validate.h"
#include "gateway/chat/chat_prompt.h"
#include "gateway/http/exchange.h"
#include "gateway/http/openai_format.h"
#include "gateway/http/openai_request.h"
#include "gateway/http/relayed_completion.h"
#include "gateway/http/web/web_page.h"
#include "gateway/relay/model_routes.h"
#include "gateway/relay/request_relay.h"
#include "shared/status.h"
#include "smallmind/v1/inference.pb.h"

namespace smallmind::gateway::http {

struct HttpApiOptions {
  // OK when the `authorization` header value (nullopt = absent) may use the API; null = open.
  std::function<shared::Status(std::optional<std::string_view>)> authenticate;
  // The Prometheus text of GET /metrics; null = the route answers 404.
  std::function<std::string()> metrics;
  // The JSON of GET /stats (gateway/http/stats_summary.h); null = the route answers 404.
  std::function<std::string()> stats;
  // How the model writes the tool calls it makes on its own (tool_choice "auto"); kNone leaves
  // them text.
  ToolCallSyntax tool_call_syntax = ToolCallSyntax::kNone;
  // The model thinks in <think> sections first: split them off into `reasoning_content`.
  bool reasoning = false;
  // The model replies in harmony channels (gpt-oss): analysis -> `reasoning_content`, final ->
  // content, calls of the offered functions -> `tool_calls` (HarmonyParser). Replaces
  // `reasoning` and `tool_call_syntax` for chat replies.
  bool harmony = false;
};

class HttpApi {
 public:
  HttpApi(std::shared_ptr<RelayEnv> env, smallmind::v1::ModelInfo info, ChatPrompter prompter,
          HttpApiOptions options);

  void Handle(Request request, std::shared_ptr<Exchange> exchange);

  // Token id -> text, for logprobs; set before serving (empty = tokens print as "").
  void SetTokenPieces(TokenPieces pieces) { pieces_ = std::move(pieces); }
  // The id responses carry: the first --served-model-name (gateway/relay/served_models.h).
  const std::string& model_id() const { return model_id_; }
  // Whether `name` (from a request's `model`) names the served model: "" or a served name.
  bool AcceptsModel(std::string_view name) const;

 private:
  void Generate(Endpoint endpoint, const Request& request, std::shared_ptr<Exchange> exchange);
  // The chat request's prompt from its messages (a 400 when the template refuses them).
  bool RenderChat(OpenAiRequest& r, HttpError* error) const;
  // A chat reply's tool and reasoning handling into `shape`; true when it may carry tool calls.
  bool ShapeChat(const OpenAiRequest& r, ResponseShape& shape) const;
  // The API key check (`authorization: Bearer`, or Anthropic's `x-api-key`); nullopt = allowed.
  std::optional<HttpError> Authenticate(const Request& request) const;
  // Anthropic's /v1/messages and /v1/messages/count_tokens (http_api_anthropic.cc).
  void Anthropic(std::string_view path, const Request& request, std::shared_ptr<Exchange> exchange);
  void Messages(const Request& request, std::shared_ptr<Exchange> exchange);
  void CountTokens(const Request& request, std::shared_ptr<Exchange> exchange);
  // A worker Tokenize call; `answer` makes the reply from its result, `fail` from an error.
  void CallTokenize(smallmind::v1::TokenizeRequest request, std::shared_ptr<Exchange> exchange,
                    std::function<Response(const smallmind::v1::TokenizeResponse&)> answer,
                    std::function<Response(const HttpError&)> fail);
  static std::chrono::system_clock::time_point Deadline(double timeout_s);
  static int64_t Now();
  // One spec per choice of `r` (its `n`), each with its derived seed.
  std::vector<ChoiceSpec> Choices(const OpenAiRequest& r, const ResponseShape& shape) const;
  void ApplyTemplate(const Request& request, Exchange& exchange);
  void Tokenize(const Request& request, std::shared_ptr<Exchange> exchange, bool decode);
  // POST /v1/embeddings (http_api_embeddings.cc).
  void Embeddings(const Request& request, std::shared_ptr<Exchange> exchange);
  // POST /v1/rerank, /rerank and /v1/reranking (http_api_rerank.cc).
  void Rerank(const Request& request, std::shared_ptr<Exchange> exchange);
  Response Models(std::string_view target) const;
  Response Health() const;
  std::string NextId(std::string_view prefix);

  const std::shared_ptr<RelayEnv> env_;
  const smallmind::v1::ModelInfo info_;
  const ChatPrompter prompter_;
  const HttpApiOptions options_;
  const std::string model_id_;
  const int64_t created_;  // the gateway's start, as /v1/models' `created`
  const std::string id_prefix_;
  std::atomic<uint64_t> next_id_{1};
  TokenPieces pieces_;
  const WebPage web_page_;
};

}  // namespace smallmind::gateway::http
