#include "gateway/generate_reactor.h"

#include <utility>

#include "shared/grpc_status.h"

namespace smallmind::gateway {

GenerateReactor::GenerateReactor(grpc::CallbackServerContext* context,
                                 std::shared_ptr<RelayEnv> env,
                                 shared::Result<ValidatedRequest> request)
    : relay_(new RequestRelay(std::move(env), this)) {
  relay_->Start(std::move(request), context->deadline());
}

void GenerateReactor::Complete(const shared::Status& status) {
  Finish(shared::ToGrpcStatus(status));
}

void GenerateReactor::OnDone() {
  relay_->Detach();
  delete this;
}

}  // namespace smallmind::gateway
