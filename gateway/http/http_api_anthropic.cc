// HttpApi's Anthropic Messages routes: POST /v1/messages and /v1/messages/count_tokens, with
// Anthropic-shaped errors from the first check on (route, method, key, body).
#include <utility>

#include <spdlog/fmt/fmt.h>

#include "gateway/admission/validate.h"
#include "gateway/http/anthropic_error.h"
#include "gateway/http/anthropic_format.h"
#include "gateway/http/anthropic_request.h"
#include "gateway/http/http_api.h"
#include "gateway/http/relayed_completion.h"

namespace smallmind::gateway::http {
namespace {

using Json = nlohmann::ordered_json;

Response AnthropicError(const HttpError& error) {
  Response r = JsonResponse(error.status, AnthropicErrorBody(error));
  if (error.status == 429) r.set(beast_http::field::retry_after, "1");
  return r;
}

}  // namespace

void HttpApi::Anthropic(std::string_view path, const Request& request,
                        std::shared_ptr<Exchange> exchange) {
  const bool count = path == "/v1/messages/count_tokens";
  if (!count && path != "/v1/messages") {
    return exchange->Reply(AnthropicError(MakeError(404, fmt::format("no route {}", path))));
  }
  if (request.method() != beast_http::verb::post) {
    Response r = AnthropicError(MakeError(405, fmt::format("{} takes POST only", path)));
    r.set(beast_http::field::allow, "POST");
    return exchange->Reply(std::move(r));
  }
  if (std::optional<HttpError> auth = Authenticate(request)) {
    return exchange->Reply(AnthropicError(*auth));
  }
  if (count) return CountTokens(request, std::move(exchange));
  Messages(request, std::move(exchange));
}

void HttpApi::Messages(const Request& request, std::shared_ptr<Exchange> exchange) {
  HttpError error;
  std::optional<AnthropicRequest> r =
      ParseAnthropicRequest(request.body(), AnthropicRoute::kMessages, &error);
  if (!r) return exchange->Reply(AnthropicError(error));
  OpenAiRequest& chat = r->chat;
  shared::Result<ModelRoutes::Route> route = RouteModel(env_, chat.model, chat.keep_alive);
  if (!route.ok()) {
    return exchange->Reply(AnthropicError(MakeError(404, route.status().message(), "model")));
  }
  if (!RenderChat(chat, &error)) return exchange->Reply(AnthropicError(error));
  ResponseShape shape;
  shape.endpoint = Endpoint::kChatCompletions;
  shape.id = NextId("msg_");
  shape.created = Now();
  shape.model = route->env->served_models.primary();
  ShapeChat(chat, shape);
  shape.tool_call_id = "toolu_" + shape.id.substr(4);
  std::vector<ChoiceSpec> choices;
  choices.push_back({std::make_unique<AnthropicFormatter>(shape, std::move(r->stop_sequences)),
                     Validate(chat.generate, shape.id)});
  RelayedCompletion::Start(route->env, std::move(exchange), std::move(choices), chat.stream,
                           Deadline(chat.timeout_s));
}

void HttpApi::CountTokens(const Request& request, std::shared_ptr<Exchange> exchange) {
  HttpError error;
  std::optional<AnthropicRequest> r =
      ParseAnthropicRequest(request.body(), AnthropicRoute::kCountTokens, &error);
  if (!r) return exchange->Reply(AnthropicError(error));
  if (shared::Result<ModelRoutes::Route> route = RouteModel(env_, r->chat.model); !route.ok()) {
    return exchange->Reply(AnthropicError(MakeError(404, route.status().message(), "model")));
  }
  if (!RenderChat(r->chat, &error)) return exchange->Reply(AnthropicError(error));
  // The prompt as the worker will tokenize it for /v1/messages: special tokens parsed, BOS as
  // the template and the model decide.
  smallmind::v1::TokenizeRequest tokenize;
  tokenize.set_text(r->chat.generate.prompt());
  tokenize.set_parse_special(true);
  if (r->chat.generate.has_add_bos()) tokenize.set_add_bos(r->chat.generate.add_bos());
  CallTokenize(
      std::move(tokenize), std::move(exchange),
      [](const smallmind::v1::TokenizeResponse& response) {
        return JsonResponse(200, Json{{"input_tokens", response.token_ids_size()}}.dump() + "\n");
      },
      AnthropicError);
}

}  // namespace smallmind::gateway::http
