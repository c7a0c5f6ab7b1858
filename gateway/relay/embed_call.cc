#include "gateway/relay/embed_call.h"

#include <utility>

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

EmbedCancel EmbedCall::Run(std::shared_ptr<RelayEnv> env, EmbedRequest request,
                           std::chrono::system_clock::time_point deadline, Done done,
                           std::optional<std::string> rerank_query) {
  std::shared_ptr<EmbedCall> call(new EmbedCall(std::move(env), deadline, std::move(done)));
  call->self_ = call;
  EmbedCancel cancel{std::weak_ptr<EmbedCall>(call)};
  shared::Result<ValidatedRequest> standin = AdmissionStandIn(request, rerank_query);
  *call->work_.mutable_request() = std::move(request);
  if (rerank_query) call->work_.set_rerank_query(std::move(*rerank_query));
  if (!standin.ok()) {
    call->Finish(standin.status());
    return cancel;
  }
  call->env_->admission->Enter(call.get(), *standin, deadline);
  return cancel;
}

void EmbedCancel::operator()() const {
  if (std::shared_ptr<EmbedCall> call = call_.lock()) call->Cancel();
}

void EmbedCall::Cancel() {
  bool withdraw = false, stop_worker = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_ || cancelled_) return;
    cancelled_ = true;
    withdraw = !admitted_;
    stop_worker = on_worker_;
  }
  // Outside the lock: either may answer inline (OnAdmitted, the worker call's callback). A
  // Withdraw that comes after the admission is a no-op there; OnAdmitted sees cancelled_.
  if (withdraw) env_->admission->Withdraw(this);
  if (stop_worker) context_.TryCancel();  // before the call starts: it starts cancelled
}

void EmbedCall::OnAdmitted(AdmissionAnswer answer) {
  if (!answer.status.ok()) return Finish(answer.status);
  bool go = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    admitted_ = true;
    on_worker_ = go = !cancelled_;
  }
  if (!go) {
    return Finish(shared::Status(shared::StatusCode::kCancelled, "the Embed call was cancelled"));
  }
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
  bool admitted = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    finished_ = true;
    admitted = admitted_;
  }
  if (admitted) env_->admission->Leave(this, std::nullopt);
  spdlog::info("{} {} inputs={} tokens={} status={}", work_.has_rerank_query() ? "rerank" : "embed",
               work_.request().request_id(), work_.request().inputs_size(),
               response_.usage().prompt_tokens(), status.ok() ? "ok" : status.ToString());
  done_(status, response_);
  std::shared_ptr<EmbedCall> self = std::move(self_);  // the last reference unless a cancel runs
}

}  // namespace smallmind::gateway
