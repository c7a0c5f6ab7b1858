#include "gateway/grpc/generate_reactor.h"

#include <string>
#include <utility>

#include "shared/check.h"
#include "shared/grpc_status.h"

namespace smallmind::gateway {

GenerateReactor::GenerateReactor(grpc::CallbackServerContext* context,
                                 std::shared_ptr<RelayEnv> env,
                                 shared::Result<ValidatedRequest> request)
    : context_(context), relay_(new RequestRelay(std::move(env), this)) {
  relay_->Start(std::move(request), context->deadline());
}

void GenerateReactor::Deliver(const smallmind::v1::GenerateResponse& message) {
  bool own_buffer = false;
  out_.Clear();  // the last write is done (one in flight); the serializer wants an empty buffer
  const grpc::Status s = grpc::SerializationTraits<smallmind::v1::GenerateResponse>::Serialize(
      message, &out_, &own_buffer);
  SM_CHECK(s.ok()) << "a GenerateResponse did not serialize: " << s.error_message();
  StartWrite(&out_);
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
