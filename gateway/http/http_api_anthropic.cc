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
  shared::Result<Route> route = RouteModel(env_, r->chat.model, r->chat.keep_alive);
  if (!route.ok()) {
    return exchange->Reply(AnthropicError(MakeError(404, route.status().message(), "model")));
  }
  const TimePoint deadline = Deadline(r->chat.timeout_s);
  auto held = std::make_shared<Route>(std::move(route).value());
  auto parsed = std::make_shared<AnthropicRequest>(std::move(r).value());
  WithChat(held, deadline, exchange, AnthropicError,
           [this, held, parsed, deadline, exchange](const std::shared_ptr<const ChatSettings>& s) {
             HttpError error;
             OpenAiRequest& chat = parsed->chat;
             if (!RenderChat(*s, chat, &error)) return exchange->Reply(AnthropicError(error));
             ResponseShape shape;
             shape.endpoint = Endpoint::kChatCompletions;
             shape.id = NextId("msg_");
             shape.created = Now();
             shape.model = held->env->served_models.primary();
             ShapeChat(*s, chat, shape);
             shape.tool_call_id = "toolu_" + shape.id.substr(4);
             std::vector<ChoiceSpec> choices;
             choices.push_back(
                 {std::make_unique<AnthropicFormatter>(shape, std::move(parsed->stop_sequences)),
                  Validate(chat.generate, shape.id)});
             RelayedCompletion::Start(held->env, exchange, std::move(choices), chat.stream,
                                      deadline);
           });
}

void HttpApi::CountTokens(const Request& request, std::shared_ptr<Exchange> exchange) {
  HttpError error;
  std::optional<AnthropicRequest> r =
      ParseAnthropicRequest(request.body(), AnthropicRoute::kCountTokens, &error);
  if (!r) return exchange->Reply(AnthropicError(error));
  shared::Result<Route> route = RouteModel(env_, r->chat.model);
  if (!route.ok()) {
    return exchange->Reply(AnthropicError(MakeError(404, route.status().message(), "model")));
  }
  auto held = std::make_shared<Route>(std::move(route).value());
  auto parsed = std::make_shared<AnthropicRequest>(std::move(r).value());
  WithChat(held, Deadline(parsed->chat.timeout_s), exchange, AnthropicError,
           [this, held, parsed, exchange](const std::shared_ptr<const ChatSettings>& s) {
             HttpError error;
             OpenAiRequest& chat = parsed->chat;
             if (!RenderChat(*s, chat, &error)) return exchange->Reply(AnthropicError(error));
             // The prompt as the model's worker will tokenize it for /v1/messages: special
             // tokens parsed, BOS as the template and the model decide.
             smallmind::v1::TokenizeRequest tokenize;
             tokenize.set_text(chat.generate.prompt());
             tokenize.set_parse_special(true);
             if (chat.generate.has_add_bos()) tokenize.set_add_bos(chat.generate.add_bos());
             CallTokenize(
                 *held->env->pool, std::move(tokenize), exchange,
                 [](const smallmind::v1::TokenizeResponse& response) {
                   return JsonResponse(
                       200, Json{{"input_tokens", response.token_ids_size()}}.dump() + "\n");
                 },
                 AnthropicError);
           });
}

}  // namespace smallmind::gateway::http
