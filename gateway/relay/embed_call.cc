#include "gateway/relay/embed_call.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "shared/grpc_status.h"
#include "shared/request_limits.h"

namespace smallmind::gateway {
namespace {

using smallmind::v1::EmbedInput;
using smallmind::v1::EmbedRequest;

// Tokens the inputs stand for, as the gateway estimates a text prompt (bytes / 4), plus each
// input's [CLS] and [SEP] (and a rerank query's tokens and separator in every input).
uint32_t EstimatedTokens(const EmbedRequest& request, const std::optional<std::string>& query) {
  const uint64_t per_input = 2 + (query ? 1 + query->size() / 4 : 0);
  uint64_t tokens = 0;
  for (const EmbedInput& in : request.inputs()) {
    tokens += per_input + (in.has_token_ids() ? in.token_ids().ids_size() : in.text().size() / 4);
  }
  return static_cast<uint32_t>(std::min<uint64_t>(tokens, 1u << 24));
}

// What admission weighs the request by: a prompt of the inputs' tokens that generates one token
// (its ServiceEstimate prices prefill by the prompt), at the request's id.
shared::Result<ValidatedRequest> AdmissionStandIn(const EmbedRequest& request,
                                                  const std::optional<std::string>& query) {
  smallmind::v1::GenerateRequest standin;
  standin.set_request_id(request.request_id());
  standin.mutable_prompt_token_ids()->mutable_ids()->Resize(
      static_cast<int>(EstimatedTokens(request, query)), 0);
  standin.mutable_stopping()->set_max_new_tokens(1);
  return Validate(standin, request.request_id());
}

}  // namespace

shared::Status CheckEmbedRequest(const EmbedRequest& request) {
  if (request.request_id().size() > shared::kMaxRequestIdBytes) {
    return shared::InvalidArgument(fmt::format("request_id must be at most {} bytes, got {}",
                                               shared::kMaxRequestIdBytes,
                                               request.request_id().size()));
  }
  if (request.inputs_size() == 0 || request.inputs_size() > kMaxEmbedInputs) {
    return shared::InvalidArgument(fmt::format("inputs must hold [1, {}] inputs, got {}",
                                               kMaxEmbedInputs, request.inputs_size()));
  }
  for (int i = 0; i < request.inputs_size(); i++) {
    const EmbedInput& in = request.inputs(i);
    const bool empty = in.input_case() == EmbedInput::INPUT_NOT_SET ||
                       (in.has_token_ids() ? in.token_ids().ids_size() == 0 : in.text().empty());
    if (empty) {
      return shared::InvalidArgument(
          fmt::format("inputs[{}] is empty: every input needs text or token ids", i));
    }
  }
  if (request.pooling() != smallmind::v1::POOLING_MODEL &&
      request.pooling() != smallmind::v1::POOLING_LAST) {
    return shared::InvalidArgument(
        fmt::format("pooling must be POOLING_MODEL (0) or POOLING_LAST (1), got {}",
                    static_cast<int>(request.pooling())));
  }
  return shared::Status::Ok();
}

EmbedCall::EmbedCall(std::shared_ptr<RelayEnv> env, std::chrono::system_clock::time_point deadline,
                     Done done)
    : env_(std::move(env)),
      deadline_(deadline),
      start_(std::chrono::steady_clock::now()),
      done_(std::move(done)) {
  env_->active.Add();
}

// As RequestRelay's: the channel references go before the count drops.
EmbedCall::~EmbedCall() {
  link_.reset();
  ActiveRequests& active = env_->active;
  env_.reset();
  active.Remove();
}

void EmbedCall::Run(std::shared_ptr<RelayEnv> env, EmbedRequest request,
                    std::chrono::system_clock::time_point deadline, Done done,
                    std::optional<std::string> rerank_query) {
  auto* call = new EmbedCall(std::move(env), deadline, std::move(done));
  shared::Result<ValidatedRequest> standin = AdmissionStandIn(request, rerank_query);
  *call->work_.mutable_request() = std::move(request);
  if (rerank_query) call->work_.set_rerank_query(std::move(*rerank_query));
  if (!standin.ok()) return call->Finish(standin.status());
  call->env_->admission->Enter(call, *standin, deadline);
}

void EmbedCall::OnAdmitted(AdmissionAnswer answer) {
  if (!answer.status.ok()) return Finish(answer.status);
  admitted_ = true;
  link_ = env_->pool->Pick();
  if (!link_) return Finish(env_->pool->NoWorkerStatus());
  work_.set_gateway_queue_ms(
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count());
  if (deadline_ != std::chrono::system_clock::time_point::max()) context_.set_deadline(deadline_);
  link_->stub().async()->Embed(&context_, &work_, &response_, [this](grpc::Status s) {
    link_->EndRequest();
    Finish(shared::FromGrpcStatus(s));
  });
}

void EmbedCall::Finish(const shared::Status& status) {
  if (admitted_) env_->admission->Leave(this, std::nullopt);
  spdlog::info("{} {} inputs={} tokens={} status={}", work_.has_rerank_query() ? "rerank" : "embed",
               work_.request().request_id(), work_.request().inputs_size(),
               response_.usage().prompt_tokens(), status.ok() ? "ok" : status.ToString());
  done_(status, response_);
  delete this;
}

}  // namespace smallmind::gateway
