// A scripted in-process smallmind.v1.Worker on a Unix socket for gateway tests (header-only: the
// test build compiles *_test.cc only). The prompt picks the script: see FakeWorker::Stream.
// Thread-safe; its waits are bounded condition-variable waits.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <grpcpp/grpcpp.h>

#include "gateway/gateway_config.h"
#include "shared/request_limits.h"
#include "smallmind/v1/worker.grpc.pb.h"

namespace smallmind::gateway::testing {

inline constexpr uint32_t kFakeVocab = 1000;
inline constexpr uint32_t kFakeContext = 512;
inline constexpr char kInvalidMessage[] = "prompt has 9000 tokens; the context holds 512";
inline constexpr size_t kSayPiece = 3;  // bytes per message of the "say:" script

// The request as the real worker reads it: max_new_tokens 0 (which the gateway passes on) is the
// default, resolved by the worker that knows the prompt's length.
inline smallmind::v1::GenerateRequest WithWorkerDefaults(smallmind::v1::GenerateRequest r) {
  if (r.stopping().max_new_tokens() == 0) {
    r.mutable_stopping()->set_max_new_tokens(shared::kDefaultMaxNewTokens);
  }
  return r;
}

class FakeWorker final : public smallmind::v1::Worker::CallbackService {
 public:
  // `fail_every_submit`: every Submit fails at once with this code.
  FakeWorker(uint32_t id, std::string socket_path,
             std::optional<grpc::StatusCode> fail_every_submit = std::nullopt)
      : id_(id), socket_path_(std::move(socket_path)), fail_every_submit_(fail_every_submit) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort(target(), grpc::InsecureServerCredentials());
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
  }
  ~FakeWorker() override { Shutdown(); }

  bool started() const { return server_ != nullptr; }
  std::string target() const { return "unix:" + socket_path_; }
  void Shutdown() {
    if (server_) server_->Shutdown(std::chrono::system_clock::now());
  }

  int submits() const { return Get(submits_); }
  int cancels() const { return Get(cancels_); }
  smallmind::v1::SubmitRequest last_submit() const {
    std::lock_guard<std::mutex> lock(mu_);
    return last_submit_;
  }
  bool WaitForSubmits(int n, std::chrono::milliseconds timeout) {
    return WaitFor(submits_, n, timeout);
  }
  bool WaitForCancels(int n, std::chrono::milliseconds timeout) {
    return WaitFor(cancels_, n, timeout);
  }

  grpc::ServerWriteReactor<smallmind::v1::SubmitResponse>* Submit(
      grpc::CallbackServerContext*, const smallmind::v1::SubmitRequest* request) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++submits_;
      last_submit_ = *request;
    }
    changed_.notify_all();
    return new Stream(this, *request);
  }
  grpc::ServerUnaryReactor* Tokenize(grpc::CallbackServerContext* context,
                                     const smallmind::v1::TokenizeRequest* request,
                                     smallmind::v1::TokenizeResponse* response) override {
    // One id per byte, so tests can predict the answer.
    for (unsigned char c : request->text()) response->add_token_ids(c);
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
  grpc::ServerUnaryReactor* GetModelInfo(grpc::CallbackServerContext* context,
                                         const smallmind::v1::GetModelInfoRequest*,
                                         smallmind::v1::ModelInfo* response) override {
    response->set_model("fake");
    response->set_architecture("llama");
    response->set_vocab_size(kFakeVocab);
    response->set_context_length(kFakeContext);
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
  grpc::ServerUnaryReactor* Stats(grpc::CallbackServerContext* context,
                                  const smallmind::v1::StatsRequest*,
                                  smallmind::v1::WorkerStats* response) override {
    response->set_worker_id(id_);
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

 private:
  // One Submit stream playing its script: "block" streams nothing until cancelled, "block-after-1"
  // sends one message then waits for the cancel, "invalid" fails with INVALID_ARGUMENT,
  // "fail-after-2" sends two messages then fails with INTERNAL; a prompt holding "say:" streams
  // the text after it (up to "<|im_end|>", where a ChatML chat prompt ends the user's message, else
  // up to the last "<|end|>", where gpt-oss's harmony prompt ends it: a harmony reply holds more)
  // in pieces of kSayPiece bytes, one token each, the last with STOP; any other prompt streams
  // max_new_tokens one-token messages (ids 1, 2, ...), the last with LENGTH.
  class Stream final : public grpc::ServerWriteReactor<smallmind::v1::SubmitResponse> {
   public:
    Stream(FakeWorker* owner, const smallmind::v1::SubmitRequest& submit)
        : owner_(owner), request_(WithWorkerDefaults(submit.request())) {
      const std::string& prompt = request_.prompt();
      if (owner_->fail_every_submit_) {
        Finish(grpc::Status(*owner_->fail_every_submit_, "fake worker refuses"));
      } else if (prompt == "invalid") {
        Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, kInvalidMessage));
      } else if (prompt != "block") {
        if (const size_t say = prompt.find("say:"); say != std::string::npos) {
          size_t end = prompt.find("<|im_end|>", say);
          if (end == std::string::npos) {
            end = prompt.rfind("<|end|>");
            if (end != std::string::npos && end < say) end = std::string::npos;
          }
          say_ = prompt.substr(say + 4, end == std::string::npos ? end : end - say - 4);
          total_ = static_cast<uint32_t>((say_.size() + kSayPiece - 1) / kSayPiece);
        } else {
          total_ = prompt == "fail-after-2"    ? 2
                   : prompt == "block-after-1" ? 1
                                               : request_.stopping().max_new_tokens();
        }
        WriteNext();
      }
    }
    void OnWriteDone(bool ok) override {
      if (!ok) return Finish(grpc::Status::CANCELLED);
      if (sent_ < total_) return WriteNext();
      if (request_.prompt() == "block-after-1") {
        // Waits for the cancel; OnCancel may have come while the write was in flight.
        std::lock_guard<std::mutex> lock(mu_);
        idle_ = true;
        if (cancelled_) Finish(grpc::Status::CANCELLED);
        return;
      }
      if (request_.prompt() == "fail-after-2") {
        return Finish(grpc::Status(grpc::StatusCode::INTERNAL, "engine fault"));
      }
      Finish(grpc::Status::OK);
    }
    void OnCancel() override {
      owner_->RecordCancel();
      if (request_.prompt() == "block") Finish(grpc::Status::CANCELLED);
      if (request_.prompt() == "block-after-1") {
        std::lock_guard<std::mutex> lock(mu_);
        cancelled_ = true;
        if (idle_) Finish(grpc::Status::CANCELLED);
      }
    }
    void OnDone() override { delete this; }

   private:
    void WriteNext() {
      auto* r = message_.mutable_response();
      r->Clear();
      r->set_request_id(request_.request_id());
      r->add_token_ids(sent_ + 1);
      r->set_text(say_.empty() ? "t" + std::to_string(sent_ + 1) + " "
                               : say_.substr(size_t{sent_} * kSayPiece, kSayPiece));
      ++sent_;
      if (sent_ == total_ && request_.prompt() != "fail-after-2" &&
          request_.prompt() != "block-after-1") {
        r->set_finish_reason(say_.empty() ? smallmind::v1::LENGTH : smallmind::v1::STOP);
        r->mutable_usage()->set_prompt_tokens(3);
        r->mutable_usage()->set_completion_tokens(sent_);
      }
      StartWrite(&message_);
    }
    FakeWorker* const owner_;
    const smallmind::v1::GenerateRequest request_;
    smallmind::v1::SubmitResponse message_;
    std::string say_;  // the "say:" script's text
    uint32_t total_ = 0;
    uint32_t sent_ = 0;
    std::mutex mu_;           // "block-after-1": OnCancel and OnWriteDone may run concurrently
    bool idle_ = false;       // guarded by mu_: the last write is done
    bool cancelled_ = false;  // guarded by mu_
  };

  void RecordCancel() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++cancels_;
    }
    changed_.notify_all();
  }
  int Get(const int& field) const {
    std::lock_guard<std::mutex> lock(mu_);
    return field;
  }
  bool WaitFor(const int& field, int n, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, timeout, [&] { return field >= n; });
  }

  const uint32_t id_;
  const std::string socket_path_;
  const std::optional<grpc::StatusCode> fail_every_submit_;
  std::unique_ptr<grpc::Server> server_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  int submits_ = 0;                           // guarded by mu_
  int cancels_ = 0;                           // guarded by mu_
  smallmind::v1::SubmitRequest last_submit_;  // guarded by mu_
};

// An in-process gateway's config attached to `worker` alone: 127.0.0.1, any free port, a 200 ms
// drain.
inline GatewayConfig OneWorkerConfig(const FakeWorker& worker) {
  GatewayConfig config;
  config.worker_endpoints = {worker.target()};
  config.listen_host = "127.0.0.1";
  config.port = 0;
  config.drain_timeout = std::chrono::milliseconds(200);
  return config;
}

}  // namespace smallmind::gateway::testing
