// One attempt of a request on one worker: its Submit stream, read one message at a time. Built and
// owned by RequestRelay; gRPC runs its reactions on its own threads and they are forwarded to the
// Owner. The start/read/cancel/release methods may be called from any thread.
#pragma once

#include <chrono>
#include <memory>

#include <grpcpp/grpcpp.h>

#include "gateway/workers/worker_client.h"
#include "shared/status.h"
#include "smallmind/v1/worker.grpc.pb.h"

namespace smallmind::gateway {

class WorkerAttempt final : public grpc::ClientReadReactor<smallmind::v1::SubmitResponse> {
 public:
  class Owner {
   public:
    // A read started by Start or ReadNext completed; `ok` = response() holds a new message.
    virtual void OnWorkerRead(WorkerAttempt* call, bool ok) = 0;
    // The last reaction: the owner may delete the call (and itself) here; nothing follows.
    virtual void OnWorkerDone(WorkerAttempt* call, shared::Status status) = 0;

   protected:
    ~Owner() = default;
  };

  WorkerAttempt(Owner* owner, std::shared_ptr<WorkerClient> link)
      : owner_(owner), link_(std::move(link)) {}

  // Opens the stream with its first read. A hold keeps the call open until Release, because later
  // reads start from the consumer's side (ReadNext after a pause). `request` must stay unchanged
  // until OnWorkerDone.
  void Start(const smallmind::v1::SubmitRequest* request,
             std::chrono::system_clock::time_point deadline);
  void ReadNext() { StartRead(&response_); }
  void Release() { RemoveHold(); }
  // Safe at any time, also before Start and after the call ended.
  void Cancel() { context_.TryCancel(); }

  smallmind::v1::SubmitResponse* response() { return &response_; }
  WorkerClient& link() { return *link_; }

  void OnReadDone(bool ok) override {
    if (ok) link_->NoteProgress();  // alive, however late its Stats answers
    owner_->OnWorkerRead(this, ok);
  }
  void OnDone(const grpc::Status& status) override;

 private:
  Owner* const owner_;
  const std::shared_ptr<WorkerClient> link_;
  grpc::ClientContext context_;
  smallmind::v1::SubmitResponse response_;
};

}  // namespace smallmind::gateway
