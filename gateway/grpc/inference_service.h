// The public smallmind.v1.Inference service: Generate streams become GenerateReactors, Embed calls
// EmbedCalls (Rerank calls too, through RunRerank), Tokenize and GetModelInfo are forwarded to a
// healthy worker of the model they name (one that is not loaded is waited for at its LoadGate,
// with the call's deadline). Checks API keys when configured. Generate takes its request as raw
// bytes and parses it here, so that bytes that are no GenerateRequest get INVALID_ARGUMENT saying
// so (gRPC's own parse failure is a bare status without a message). Built by Gateway; gRPC calls
// its handlers concurrently. Thread-safe.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "gateway/admission/validate.h"
#include "gateway/grpc/generate_reactor.h"
#include "gateway/security/api_key_store.h"
#include "shared/status.h"
#include "smallmind/v1/inference.grpc.pb.h"

namespace smallmind::gateway {

// Generate raw (ByteBuffer in and out), the others typed.
using InferenceServiceBase = smallmind::v1::Inference::WithRawCallbackMethod_Generate<
    smallmind::v1::Inference::WithCallbackMethod_Tokenize<
        smallmind::v1::Inference::WithCallbackMethod_GetModelInfo<
            smallmind::v1::Inference::WithCallbackMethod_Embed<
                smallmind::v1::Inference::WithCallbackMethod_Rerank<
                    smallmind::v1::Inference::WithCallbackMethod_ListModels<
                        smallmind::v1::Inference::Service>>>>>>;

class InferenceService final : public InferenceServiceBase {
 public:
  // `api_keys` decides who may call (its enabled() false = anyone).
  InferenceService(std::shared_ptr<RelayEnv> env, std::shared_ptr<const ApiKeyStore> api_keys);

  grpc::ServerWriteReactor<grpc::ByteBuffer>* Generate(grpc::CallbackServerContext* context,
                                                       const grpc::ByteBuffer* request) override;
  grpc::ServerUnaryReactor* Tokenize(grpc::CallbackServerContext* context,
                                     const smallmind::v1::TokenizeRequest* request,
                                     smallmind::v1::TokenizeResponse* response) override;
  grpc::ServerUnaryReactor* GetModelInfo(grpc::CallbackServerContext* context,
                                         const smallmind::v1::GetModelInfoRequest* request,
                                         smallmind::v1::ModelInfo* response) override;
  // Through admission and routing like Generate (gateway/relay/embed_call.h).
  grpc::ServerUnaryReactor* Embed(grpc::CallbackServerContext* context,
                                  const smallmind::v1::EmbedRequest* request,
                                  smallmind::v1::EmbedResponse* response) override;
  // The documents as one Embed-like call scored by the worker (gateway/relay/rerank_call.h).
  grpc::ServerUnaryReactor* Rerank(grpc::CallbackServerContext* context,
                                   const smallmind::v1::RerankRequest* request,
                                   smallmind::v1::RerankResponse* response) override;
  // Every served model with its state (gateway/relay/model_routes.h); answered in the gateway.
  grpc::ServerUnaryReactor* ListModels(grpc::CallbackServerContext* context,
                                       const smallmind::v1::ListModelsRequest* request,
                                       smallmind::v1::ListModelsResponse* response) override;

 private:
  // UNAUTHENTICATED unless keys are off or `authorization: Bearer <key>` names an accepted key.
  shared::Status Authenticate(const grpc::CallbackServerContext& context) const;
  std::string NextRequestId();

  const std::shared_ptr<RelayEnv> env_;
  const std::shared_ptr<const ApiKeyStore> api_keys_;
  const std::string id_prefix_;  // random per gateway, so ids differ across restarts
  std::atomic<uint64_t> next_id_{1};
};

}  // namespace smallmind::gateway
