// InProcessWorker (test helper): a Worker started in the test process on a Unix socket in its own
// temporary directory, with a worker.proto stub to call it: Submit streams collected whole, Stats.
// Header-only; one per test; calls from the test thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "smallmind/v1/worker.grpc.pb.h"
#include "tests/testing/scoped_temp_dir.h"
#include "worker/worker.h"

namespace smallmind::worker::testing {

// Everything one Submit stream returned.
struct SubmitResult {
  grpc::Status status;
  std::vector<v1::GenerateResponse> messages;
  std::vector<uint32_t> token_ids;  // all messages' token_ids in order

  const v1::GenerateResponse& last() const { return messages.back(); }
};

class InProcessWorker {
 public:
  // Starts a worker on builtin:tiny (unless `config.model` says otherwise), its KV pool in process
  // memory; the test fails if it does not start.
  explicit InProcessWorker(WorkerConfig config = {}) : dir_("ipw") {
    if (config.model.model.empty()) config.model.model = "builtin:tiny";
    config.listen = "unix:" + dir_.File("worker.sock");
    config.kv.segment = "none";
    if (config.threads == 0) config.threads = 1;
    worker_ = std::make_unique<Worker>(config);
    const shared::Status started = worker_->Start();
    EXPECT_TRUE(started.ok()) << started.ToString();
    channel_ = grpc::CreateChannel(config.listen, grpc::InsecureChannelCredentials());
    stub_ = v1::Worker::NewStub(channel_);
  }
  ~InProcessWorker() { worker_->Shutdown(); }

  SubmitResult Submit(const v1::GenerateRequest& request) {
    v1::SubmitRequest submit;
    *submit.mutable_request() = request;
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientReader<v1::SubmitResponse>> reader =
        stub_->Submit(&context, submit);
    SubmitResult out;
    v1::SubmitResponse message;
    while (reader->Read(&message)) {
      out.messages.push_back(message.response());
      for (uint32_t id : message.response().token_ids()) out.token_ids.push_back(id);
    }
    out.status = reader->Finish();
    return out;
  }

  v1::WorkerStats Stats() {
    grpc::ClientContext context;
    v1::WorkerStats stats;
    const grpc::Status status = stub_->Stats(&context, v1::StatsRequest(), &stats);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return stats;
  }

  Worker& worker() { return *worker_; }
  // A stub of its own, for calls the test drives itself (e.g. a stream it cancels).
  std::unique_ptr<v1::Worker::Stub> NewStub() { return v1::Worker::NewStub(channel_); }

 private:
  smallmind::testing::ScopedTempDir dir_;
  std::unique_ptr<Worker> worker_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Worker::Stub> stub_;
};

}  // namespace smallmind::worker::testing
