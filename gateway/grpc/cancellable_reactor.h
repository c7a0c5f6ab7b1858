// CancellableReactor: the reactor of a unary call whose work can be stopped (Embed, Rerank: an
// EmbedCall). Its OnCancel (the client went away or its deadline passed) runs the cancel set
// with SetCancel, at once when the call was cancelled before. Built by InferenceService; gRPC
// calls OnCancel and OnDone, the handler SetCancel and Finish. Thread-safe; deletes itself in
// OnDone.
#pragma once

#include <functional>
#include <mutex>

#include <grpcpp/grpcpp.h>

namespace smallmind::gateway {

class CancellableReactor final : public grpc::ServerUnaryReactor {
 public:
  void SetCancel(std::function<void()> cancel);

  void OnCancel() override;
  void OnDone() override { delete this; }

 private:
  std::mutex mu_;
  bool cancelled_ = false;        // guarded by mu_
  std::function<void()> cancel_;  // guarded by mu_
};

}  // namespace smallmind::gateway
