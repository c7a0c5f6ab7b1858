// The gRPC door for Generate: one ServerWriteReactor per stream that turns the RequestRelay's
// Deliver/Complete into StartWrite/Finish and its own reactions into relay events. It writes raw
// bytes (InferenceService parses the request itself): each message is serialized into the one
// buffer of the one write in flight. Built by
// InferenceService; gRPC runs its reactions on its threads, the relay calls it from any thread.
#pragma once

#include <memory>

#include <grpcpp/grpcpp.h>

#include "gateway/admission/validate.h"
#include "gateway/relay/request_relay.h"
#include "shared/status.h"
#include "smallmind/v1/inference.pb.h"

namespace smallmind::gateway {

class GenerateReactor final : public grpc::ServerWriteReactor<grpc::ByteBuffer>,
                              private RelayConsumer {
 public:
  // Starts the relay, which finishes the stream at once with `request`'s error when it has one.
  // The reactor deletes itself in OnDone; the relay outlives it until its worker call ends.
  GenerateReactor(grpc::CallbackServerContext* context, std::shared_ptr<RelayEnv> env,
                  shared::Result<ValidatedRequest> request);

  void OnWriteDone(bool ok) override { relay_->OnDelivered(ok); }
  void OnCancel() override { relay_->Cancel(); }
  void OnDone() override;

 private:
  void Deliver(const smallmind::v1::GenerateResponse& message) override;
  // Nothing touches the reactor after Finish: OnDone may delete it at once on another thread.
  void Complete(const RelayOutcome& outcome) override;

  grpc::CallbackServerContext* const context_;
  RequestRelay* const relay_;  // valid until Detach in OnDone
  grpc::ByteBuffer out_;       // the message being written (the relay keeps one write in flight)
};

}  // namespace smallmind::gateway
