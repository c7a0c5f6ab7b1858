#include "gateway/grpc/inference_service.h"

#include <atomic>
#include <random>
#include <utility>

#include <spdlog/fmt/fmt.h>

#include "gateway/grpc/cancellable_reactor.h"
#include "gateway/relay/embed_call.h"
#include "gateway/relay/model_routes.h"
#include "gateway/relay/rerank_call.h"
#include "shared/grpc_status.h"

namespace smallmind::gateway {
namespace {

using smallmind::v1::GenerateRequest;
using smallmind::v1::GenerateResponse;

std::string RandomPrefix() {
  std::random_device rd;
  return fmt::format("{:08x}", static_cast<uint32_t>(rd()));
}

// Sends one unary call to a healthy worker and finishes `reactor` with its answer. The client
// context inherits the caller's deadline and cancellation. `after` edits a successful response.
template <typename Request, typename Response, typename Method, typename After>
void Forward(grpc::CallbackServerContext* context, grpc::ServerUnaryReactor* reactor,
             WorkerPool& pool, const Request* request, Response* response, Method method,
             After after) {
  std::shared_ptr<WorkerClient> link = pool.Pick();
  if (!link) return reactor->Finish(shared::ToGrpcStatus(pool.NoWorkerStatus()));
  grpc::ClientContext* client = grpc::ClientContext::FromCallbackServerContext(*context).release();
  // The context and the link go before Finish, which lets a shutting-down server finish and the
  // gateway destroy the channels: the last channel reference must not drop on this callback thread
  // (gRPC 1.51 aborts tearing down its callback queue under it).
  method(link->stub().async(), client, request, response,
         [reactor, client, link, response, after](grpc::Status s) mutable {
           link->EndRequest();
           link.reset();
           delete client;
           if (s.ok()) after(response);
           reactor->Finish(s);
         });
}

// Forward once the model `route` goes to is loaded: a call for a model that is not waits at its
// LoadGate (it loads) until the call's deadline, as Generate waits; the route is held until then.
// A call cancelled while it waits (its client left, the server stops) finishes CANCELLED at once;
// `started` makes sure only one of the wait's end and the cancel goes on with the reactor.
template <typename Request, typename Response, typename Method, typename After>
grpc::ServerUnaryReactor* ForwardWhenLoaded(grpc::CallbackServerContext* context,
                                            ModelRoutes::Route route, const Request* request,
                                            Response* response, Method method, After after) {
  auto* reactor = new CancellableReactor();
  auto started = std::make_shared<std::atomic<bool>>(false);
  reactor->SetCancel([reactor, started] {
    if (started->exchange(true)) return;  // on a worker: the client context carries the cancel
    reactor->Finish(shared::ToGrpcStatus(
        shared::Status(shared::StatusCode::kCancelled, "cancelled while its model was loading")));
  });
  auto held = std::make_shared<ModelRoutes::Route>(std::move(route));
  WhenRouteLoaded(*held, context->deadline(),
                  [context, reactor, started, held, request, response, method,
                   after](const shared::Status& loaded) {
                    if (started->exchange(true)) return;  // cancelled: the reactor is done
                    if (!loaded.ok()) return reactor->Finish(shared::ToGrpcStatus(loaded));
                    Forward(context, reactor, *held->env->pool, request, response, method, after);
                  });
  return reactor;
}

// The request's bytes as a GenerateRequest; INVALID_ARGUMENT when they are not one.
shared::Status ParseGenerateRequest(const grpc::ByteBuffer& bytes, GenerateRequest* request) {
  grpc::ByteBuffer copy(bytes);  // shares the slices; Deserialize consumes its argument
  const grpc::Status s = grpc::SerializationTraits<GenerateRequest>::Deserialize(&copy, request);
  if (s.ok()) return shared::Status::Ok();
  return shared::InvalidArgument(fmt::format(
      "the request ({} bytes) is not a valid smallmind.v1.GenerateRequest in protobuf wire "
      "format{}{}; send one serialized from proto/smallmind/v1/inference.proto",
      bytes.Length(), s.error_message().empty() ? "" : ": ", s.error_message()));
}

}  // namespace

InferenceService::InferenceService(std::shared_ptr<RelayEnv> env,
                                   std::shared_ptr<const ApiKeyStore> api_keys)
    : env_(std::move(env)), api_keys_(std::move(api_keys)), id_prefix_(RandomPrefix()) {}

shared::Status InferenceService::Authenticate(const grpc::CallbackServerContext& context) const {
  if (!api_keys_->enabled()) return shared::Status::Ok();
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) return api_keys_->Authenticate(std::nullopt);
  return api_keys_->Authenticate(std::string_view(it->second.data(), it->second.size()));
}

std::string InferenceService::NextRequestId() {
  return fmt::format("gw-{}-{}", id_prefix_, next_id_.fetch_add(1, std::memory_order_relaxed));
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* InferenceService::Generate(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* bytes) {
  shared::Status auth = Authenticate(*context);
  if (!auth.ok()) return new GenerateReactor(context, env_, std::move(auth));
  GenerateRequest request;
  if (shared::Status parsed = ParseGenerateRequest(*bytes, &request); !parsed.ok()) {
    return new GenerateReactor(context, env_, std::move(parsed));
  }
  shared::Result<ModelRoutes::Route> route = RouteModel(env_, request.model());
  if (!route.ok()) return new GenerateReactor(context, env_, route.status());
  // The route holds its model busy until the reactor's relay counts in its env.
  return new GenerateReactor(context, route->env, Validate(request, NextRequestId()));
}

grpc::ServerUnaryReactor* InferenceService::Tokenize(grpc::CallbackServerContext* context,
                                                     const smallmind::v1::TokenizeRequest* request,
                                                     smallmind::v1::TokenizeResponse* response) {
  shared::Status status = Authenticate(*context);
  if (status.ok() && request->input_case() == smallmind::v1::TokenizeRequest::INPUT_NOT_SET) {
    status = shared::InvalidArgument("exactly one of text or token_ids must be set, got neither");
  }
  shared::Result<ModelRoutes::Route> route =
      status.ok() ? RouteModel(env_, request->model()) : shared::Result<ModelRoutes::Route>(status);
  if (!route.ok()) {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(shared::ToGrpcStatus(route.status()));
    return reactor;
  }
  return ForwardWhenLoaded(
      context, std::move(route).value(), request, response,
      [](auto* stub, auto* client, auto* req, auto* resp, auto done) {
        stub->Tokenize(client, req, resp, std::move(done));
      },
      [](smallmind::v1::TokenizeResponse*) {});
}

grpc::ServerUnaryReactor* InferenceService::GetModelInfo(
    grpc::CallbackServerContext* context, const smallmind::v1::GetModelInfoRequest* request,
    smallmind::v1::ModelInfo* response) {
  shared::Status auth = Authenticate(*context);
  shared::Result<ModelRoutes::Route> route =
      auth.ok() ? RouteModel(env_, request->model()) : shared::Result<ModelRoutes::Route>(auth);
  if (!route.ok()) {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(shared::ToGrpcStatus(route.status()));
    return reactor;
  }
  RelayEnv* env = route->env.get();
  if (env->models) {
    // Not loaded now (its load has started): the facts of its last load, with workers 0.
    const ModelStatus status = env->models->residency().Status(route->index);
    if (status.state != ModelState::kLoaded && status.info) {
      *response = *status.info;
      response->set_workers(0);
      response->clear_served_model_names();
      for (const std::string& name : env->served_models.names()) {
        response->add_served_model_names(name);
      }
      grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
      reactor->Finish(shared::ToGrpcStatus(shared::Status::Ok()));
      return reactor;
    }
  }
  // Never loaded: its facts come from its first load, which the call waits for.
  return ForwardWhenLoaded(
      context, std::move(route).value(), request, response,
      [](auto* stub, auto* client, auto* req, auto* resp, auto done) {
        stub->GetModelInfo(client, req, resp, std::move(done));
      },
      // Plain pointers: the envs outlive the server, and a shared reference dropped on the
      // callback thread could be the last one.
      [pool = env->pool.get(), names = &env->served_models](smallmind::v1::ModelInfo* info) {
        info->set_workers(static_cast<uint32_t>(pool->HealthyCount()));
        info->clear_served_model_names();
        for (const std::string& name : names->names()) info->add_served_model_names(name);
      });
}

grpc::ServerUnaryReactor* InferenceService::Embed(grpc::CallbackServerContext* context,
                                                  const smallmind::v1::EmbedRequest* request,
                                                  smallmind::v1::EmbedResponse* response) {
  // Its own reactor: a client that goes away cancels the work (EmbedCancel).
  auto* reactor = new CancellableReactor();
  shared::Status status = Authenticate(*context);
  if (status.ok()) status = CheckEmbedRequest(*request);
  shared::Result<ModelRoutes::Route> route =
      status.ok() ? RouteModel(env_, request->model()) : shared::Result<ModelRoutes::Route>(status);
  if (!route.ok()) {
    reactor->Finish(shared::ToGrpcStatus(route.status()));
    return reactor;
  }
  smallmind::v1::EmbedRequest copy = *request;
  if (copy.request_id().empty()) copy.set_request_id(NextRequestId());
  reactor->SetCancel(EmbedCall::Run(
      route->env, std::move(copy), context->deadline(),
      [reactor, response](const shared::Status& s, const smallmind::v1::EmbedResponse& answer) {
        if (s.ok()) *response = answer;
        reactor->Finish(shared::ToGrpcStatus(s));
      }));
  return reactor;
}

grpc::ServerUnaryReactor* InferenceService::Rerank(grpc::CallbackServerContext* context,
                                                   const smallmind::v1::RerankRequest* request,
                                                   smallmind::v1::RerankResponse* response) {
  auto* reactor = new CancellableReactor();
  shared::Status status = Authenticate(*context);
  if (status.ok()) status = CheckRerankRequest(*request);
  shared::Result<ModelRoutes::Route> route =
      status.ok() ? RouteModel(env_, request->model()) : shared::Result<ModelRoutes::Route>(status);
  if (!route.ok()) {
    reactor->Finish(shared::ToGrpcStatus(route.status()));
    return reactor;
  }
  smallmind::v1::RerankRequest copy = *request;
  if (copy.request_id().empty()) copy.set_request_id(NextRequestId());
  reactor->SetCancel(RunRerank(
      route->env, std::move(copy), context->deadline(),
      [reactor, response](const shared::Status& s, const smallmind::v1::RerankResponse& answer) {
        if (s.ok()) *response = answer;
        reactor->Finish(shared::ToGrpcStatus(s));
      }));
  return reactor;
}

grpc::ServerUnaryReactor* InferenceService::ListModels(
    grpc::CallbackServerContext* context, const smallmind::v1::ListModelsRequest*,
    smallmind::v1::ListModelsResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  shared::Status status = Authenticate(*context);
  if (status.ok()) *response = ListServedModels(*env_);
  reactor->Finish(shared::ToGrpcStatus(status));
  return reactor;
}

}  // namespace smallmind::gateway
