// HttpApi's POST /v1/embeddings (OpenAI's shape; docs/embeddings.md): the body parsed into an
// EmbedRequest, `model` checked as on the other routes, then the same EmbedCall (admission,
// routing, the worker's Embed) as the gRPC Embed.
#include <utility>

#include "gateway/http/embeddings_request.h"
#include "gateway/http/http_api.h"
#include "gateway/http/http_error.h"
#include "gateway/relay/embed_call.h"

namespace smallmind::gateway::http {
namespace {

// A worker's error about an input, in the door's words: inputs[i] is the request's input[i].
HttpError EmbedError(const shared::Status& status) {
  HttpError e = ErrorFromStatus(status);
  for (const auto& [proto, openai] :
       {std::pair{"inputs[", "input["}, std::pair{"inputs ", "input "},
        std::pair{"dimensions", "dimensions"}, std::pair{"pooling", "pooling"}}) {
    if (!e.message.starts_with(proto)) continue;
    e.message.replace(0, std::string_view(proto).size(), openai);
    e.param = std::string(openai).substr(0, std::string(openai).find_first_of("[ "));
  }
  return e;
}

}  // namespace

void HttpApi::Embeddings(const Request& request, std::shared_ptr<Exchange> exchange) {
  HttpError error;
  std::optional<EmbeddingsRequest> r = ParseEmbeddingsRequest(request.body(), &error);
  if (!r) return exchange->Reply(JsonResponse(error.status, ErrorBody(error)));
  shared::Result<ModelRoutes::Route> route = RouteModel(env_, r->model);
  if (!route.ok()) {
    const HttpError e = MakeError(404, route.status().message(), "model", "model_not_found");
    return exchange->Reply(JsonResponse(404, ErrorBody(e)));
  }
  if (shared::Status checked = CheckEmbedRequest(r->embed); !checked.ok()) {
    const HttpError e = EmbedError(checked);
    return exchange->Reply(JsonResponse(e.status, ErrorBody(e)));
  }
  r->embed.set_request_id(NextId("embd-"));
  // A client that goes away cancels the work (the worker drops the inputs' sequences).
  exchange->OnClientGone(EmbedCall::Run(
      route->env, std::move(r->embed), Deadline(0),
      [exchange, base64 = r->base64, model = route->env->served_models.primary()](
          const shared::Status& status, const smallmind::v1::EmbedResponse& answer) {
        Response reply = [&] {
          if (!status.ok()) {
            const HttpError e = EmbedError(status);
            return JsonResponse(e.status, ErrorBody(e));
          }
          return JsonResponse(200, FormatEmbeddings(answer, base64, model));
        }();
        exchange->Post([exchange, reply = std::move(reply)] { exchange->Reply(std::move(reply)); });
      }));
}

}  // namespace smallmind::gateway::http
