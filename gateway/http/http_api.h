// HttpApi: the routes of the HTTP door and their handlers: OpenAI's /v1/completions,
// /v1/chat/completions, /v1/embeddings and /v1/models, llama-server's /v1/rerank, Anthropic's
// /v1/messages (+ count_tokens), /health, /metrics and /stats, the web chat at /
// (gateway/http/web), and llama.cpp's /apply-template, /tokenize and /detokenize. Checks the API
// key (the gateway's key store, as on the gRPC port), turns bodies into validated requests and
// hands generation to RelayedCompletion. A chat request renders with the settings of the model it
// names (ChatSettingsCache), waiting for that model's load first when it is not loaded. Built by
// HttpDoor once the default model is known; Handle runs on connection strands concurrently.
// Thread-safe.
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
#include "gateway/http/chat_settings.h"
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
};

class HttpApi {
 public:
  // `default_chat`: the default model's settings (what a one-env test's every request uses);
  // `chat` builds every catalogued model's.
  HttpApi(std::shared_ptr<RelayEnv> env, smallmind::v1::ModelInfo info,
          std::shared_ptr<ChatSettingsCache> chat, std::shared_ptr<const ChatSettings> default_chat,
          HttpApiOptions options);

  void Handle(Request request, std::shared_ptr<Exchange> exchange);

  // Token id -> text, for logprobs; set before serving (empty = tokens print as "").
  void SetTokenPieces(TokenPieces pieces) { pieces_ = std::move(pieces); }
  // The id responses carry: the first --served-model-name (gateway/relay/served_models.h).
  const std::string& model_id() const { return model_id_; }
  // Whether `name` (from a request's `model`) names the served model: "" or a served name.
  bool AcceptsModel(std::string_view name) const;

 private:
  using Route = ModelRoutes::Route;
  using TimePoint = std::chrono::system_clock::time_point;
  using FailFn = std::function<Response(const HttpError&)>;
  using ChatThen = std::function<void(const std::shared_ptr<const ChatSettings>&)>;

  void Generate(Endpoint endpoint, const Request& request, std::shared_ptr<Exchange> exchange);
  // Shapes the (rendered) request and hands it to RelayedCompletion on `route`'s env; `chat` =
  // the model's chat settings for a chat reply, null for /v1/completions.
  void StartCompletion(const OpenAiRequest& r, const Route& route, const ChatSettings* chat,
                       TimePoint deadline, std::shared_ptr<Exchange> exchange);
  // Runs `then` on the exchange's strand with the chat settings of the model `route` goes to,
  // once it is loaded (waiting at its LoadGate until `deadline`, as Generate does); a failed
  // load, a passed deadline or a template that does not parse is answered with `fail`'s reply.
  void WithChat(std::shared_ptr<Route> route, TimePoint deadline,
                std::shared_ptr<Exchange> exchange, FailFn fail, ChatThen then);
  // The chat settings of `route`'s model now (the default's without a residency).
  shared::Result<std::shared_ptr<const ChatSettings>> ChatOf(const Route& route);
  // The chat request's prompt from its messages (a 400 when the template refuses them).
  static bool RenderChat(const ChatSettings& chat, OpenAiRequest& r, HttpError* error);
  // A chat reply's tool and reasoning handling into `shape`; true when it may carry tool calls.
  static bool ShapeChat(const ChatSettings& chat, const OpenAiRequest& r, ResponseShape& shape);
  // The API key check (`authorization: Bearer`, or Anthropic's `x-api-key`); nullopt = allowed.
  std::optional<HttpError> Authenticate(const Request& request) const;
  // Anthropic's /v1/messages and /v1/messages/count_tokens (http_api_anthropic.cc).
  void Anthropic(std::string_view path, const Request& request, std::shared_ptr<Exchange> exchange);
  void Messages(const Request& request, std::shared_ptr<Exchange> exchange);
  void CountTokens(const Request& request, std::shared_ptr<Exchange> exchange);
  // A Tokenize call on one of `pool`'s workers; `answer` makes the reply from its result, `fail`
  // from an error.
  void CallTokenize(WorkerPool& pool, smallmind::v1::TokenizeRequest request,
                    std::shared_ptr<Exchange> exchange,
                    std::function<Response(const smallmind::v1::TokenizeResponse&)> answer,
                    std::function<Response(const HttpError&)> fail);
  static std::chrono::system_clock::time_point Deadline(double timeout_s);
  static int64_t Now();
  // One spec per choice of `r` (its `n`), each with its derived seed.
  std::vector<ChoiceSpec> Choices(const OpenAiRequest& r, const ResponseShape& shape) const;
  void ApplyTemplate(const Request& request, std::shared_ptr<Exchange> exchange);
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
  const std::shared_ptr<ChatSettingsCache> chat_;
  const std::shared_ptr<const ChatSettings> default_chat_;
  const HttpApiOptions options_;
  const std::string model_id_;
  const int64_t created_;  // the gateway's start, as /v1/models' `created`
  const std::string id_prefix_;
  std::atomic<uint64_t> next_id_{1};
  TokenPieces pieces_;
  const WebPage web_page_;
};

}  // namespace smallmind::gateway::http
