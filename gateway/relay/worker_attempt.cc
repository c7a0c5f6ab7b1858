#include "gateway/relay/worker_attempt.h"

#include "shared/grpc_status.h"

namespace smallmind::gateway {

void WorkerAttempt::Start(const smallmind::v1::SubmitRequest* request,
                          std::chrono::system_clock::time_point deadline) {
  context_.set_deadline(deadline);
  link_->stub().async()->Submit(&context_, request, this);
  AddHold();
  StartRead(&response_);
  StartCall();
}

// May delete this call through its owner: nothing may follow.
void WorkerAttempt::OnDone(const grpc::Status& status) {
  owner_->OnWorkerDone(this, shared::FromGrpcStatus(status));
}

}  // namespace smallmind::gateway
