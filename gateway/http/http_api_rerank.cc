// HttpApi's POST /v1/rerank, /rerank and /v1/reranking (llama-server's paths; the Jina / Cohere
// shape, docs/embeddings.md): the body parsed into a RerankRequest, `model` checked as on the
// other routes, then the same RunRerank (an EmbedCall of the documents) as the gRPC Rerank.
#include <utility>

#include "gateway/http/http_api.h"
#include "gateway/http/http_error.h"
#include "gateway/http/rerank_request.h"
#include "gateway/relay/model_routes.h"
#include "gateway/relay/rerank_call.h"

namespace smallmind::gateway::http {
namespace {

// A worker's or the gateway's error about a document or the query, with the field named.
HttpError RerankError(const shared::Status& status) {
  HttpError e = ErrorFromStatus(status);
  if (e.message.starts_with("query")) {
    e.param = "query";
  } else if (e.message.starts_with("documents") || e.message.starts_with("the query with")) {
    e.param = "documents";
  }
  return e;
}

}  // namespace

void HttpApi::Rerank(const Request& request, std::shared_ptr<Exchange> exchange) {
  HttpError error;
  std::optional<RerankBody> r = ParseRerankBody(request.body(), &error);
  if (!r) return exchange->Reply(JsonResponse(error.status, ErrorBody(error)));
  shared::Result<ModelRoutes::Route> route = RouteModel(env_, r->model);
  if (!route.ok()) {
    const HttpError e = MakeError(404, route.status().message(), "model", "model_not_found");
    return exchange->Reply(JsonResponse(404, ErrorBody(e)));
  }
  if (shared::Status checked = CheckRerankRequest(r->rerank); !checked.ok()) {
    const HttpError e = RerankError(checked);
    return exchange->Reply(JsonResponse(e.status, ErrorBody(e)));
  }
  r->rerank.set_request_id(NextId("rerank-"));
  // A client that goes away cancels the work (the worker drops the inputs' sequences).
  exchange->OnClientGone(RunRerank(
      route->env, std::move(r->rerank), Deadline(0),
      [exchange, model = route->env->served_models.primary()](
          const shared::Status& status, const smallmind::v1::RerankResponse& answer) {
        Response reply = [&] {
          if (!status.ok()) {
            const HttpError e = RerankError(status);
            return JsonResponse(e.status, ErrorBody(e));
          }
          return JsonResponse(200, FormatRerank(answer, model));
        }();
        exchange->Post([exchange, reply = std::move(reply)] { exchange->Reply(std::move(reply)); });
      }));
}

}  // namespace smallmind::gateway::http
