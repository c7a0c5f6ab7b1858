#include "gateway/grpc/generate_reactor.h"

#include <string>
#include <utility>

#include "shared/grpc_status.h"

namespace smallmind::gateway {

GenerateReactor::GenerateReactor(grpc::CallbackServerContext* context,
                                 std::shared_ptr<RelayEnv> env,
                                 shared::Result<ValidatedRequest> request)
    : context_(context), relay_(new RequestRelay(std::move(env), this)) {
  relay_->Start(std::move(request), context->deadline());
}

void GenerateReactor::Complete(const RelayOutcome& outcome) {
  if (outcome.retry_after) {
    context_->AddTrailingMetadata("retry-after-ms", std::to_string(outcome.retry_after->count()));
  }
  Finish(shared::ToGrpcStatus(outcome.status));
}

void GenerateReactor::OnDone() {
  relay_->Detach();
  delete this;
}

}  // namespace smallmind::gateway
