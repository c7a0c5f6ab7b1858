#include "gateway/generate_reactor.h"

#include <utility>

#include <spdlog/spdlog.h>

#include "shared/grpc_status.h"

namespace smallmind::gateway {
namespace {

using Clock = std::chrono::steady_clock;
using smallmind::v1::GenerateResponse;
using smallmind::v1::SubmitRequest;
using smallmind::v1::SubmitResponse;

double MsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// Failures another worker may not share: this one is down or its queue is full.
bool Retriable(const grpc::Status& s) {
  return s.error_code() == grpc::StatusCode::UNAVAILABLE ||
         s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED;
}

}  // namespace

// The worker side of one attempt: a Submit stream read one message at a time. A hold keeps the
// call alive while reading is paused, because reads resume from the client's OnWriteDone.
class GenerateReactor::WorkerCall final : public grpc::ClientReadReactor<SubmitResponse> {
 public:
  WorkerCall(GenerateReactor* parent, std::shared_ptr<WorkerLink> link)
      : parent_(parent), link_(std::move(link)) {}

  // `request` must stay unchanged until OnDone.
  void Start(const SubmitRequest* request, std::chrono::system_clock::time_point deadline) {
    context_.set_deadline(deadline);
    link_->stub().async()->Submit(&context_, request, this);
    AddHold();
    StartRead(&response_);
    StartCall();
  }
  void ReadNext() { StartRead(&response_); }
  void Release() { RemoveHold(); }
  void Cancel() { context_.TryCancel(); }
  SubmitResponse* response() { return &response_; }
  WorkerLink& link() { return *link_; }

  void OnReadDone(bool ok) override { parent_->OnWorkerRead(this, ok); }
  // May delete the parent, and this call with it: nothing may follow.
  void OnDone(const grpc::Status& status) override { parent_->OnWorkerDone(this, status); }

 private:
  GenerateReactor* const parent_;
  const std::shared_ptr<WorkerLink> link_;
  grpc::ClientContext context_;
  SubmitResponse response_;
};

struct GenerateReactor::Actions {
  const GenerateResponse* write = nullptr;
  std::optional<grpc::Status> finish;
  std::string finished_line;
  WorkerCall* read = nullptr;
  WorkerCall* cancel = nullptr;
  WorkerCall* release = nullptr;
  bool destroy = false;
};

GenerateReactor::GenerateReactor(grpc::CallbackServerContext* context,
                                 std::shared_ptr<RelayEnv> env,
                                 shared::Result<ValidatedRequest> request)
    : env_(std::move(env)), start_(Clock::now()), deadline_(context->deadline()) {
  SM_CHECK(env_->options.outbox_capacity > 0) << "outbox_capacity must be positive";
  env_->active.Add();
  outbox_.resize(env_->options.outbox_capacity);
  Actions actions;
  std::shared_ptr<WorkerLink> link;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!request.ok()) {
      FinishLocked(shared::ToGrpcStatus(request.status()), &actions);
    } else {
      *submit_.mutable_request() = request->proto();
      prompt_tokens_ = static_cast<uint32_t>(request->prompt_token_count());
      link = env_->pool->Pick();
      if (link) {
        worker_active_ = true;
      } else {
        FinishLocked(
            grpc::Status(grpc::StatusCode::UNAVAILABLE,
                         fmt::format("no healthy worker (0 of {} ready)", env_->pool->size())),
            &actions);
      }
    }
  }
  Perform(actions);
  if (link) StartAttempt(std::move(link));
}

GenerateReactor::~GenerateReactor() { env_->active.Remove(); }

void GenerateReactor::StartAttempt(std::shared_ptr<WorkerLink> link) {
  Actions actions;
  WorkerCall* call = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    SM_CHECK(worker_active_) << "StartAttempt without a reserved worker";
    if (cancelled_ || finish_called_) {
      link->EndRequest();
      worker_active_ = false;
      CheckDoneLocked(&actions);
    } else {
      ++attempts_;
      worker_id_ = link->index();
      read_state_ = ReadState::kPending;
      calls_.push_back(std::make_unique<WorkerCall>(this, std::move(link)));
      call = calls_.back().get();
      submit_.set_gateway_queue_ms(MsBetween(start_, Clock::now()));
    }
  }
  // submit_ is not touched again until this call's OnDone.
  if (call) call->Start(&submit_, deadline_);
  Perform(actions);
}

void GenerateReactor::OnWorkerRead(WorkerCall* call, bool ok) {
  Actions actions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!ok || cancelled_ || finish_called_) {
      read_state_ = ReadState::kStopped;
      actions.release = call;
    } else {
      AcceptWorkerMessageLocked(call, &actions);
    }
  }
  Perform(actions);
}

void GenerateReactor::AcceptWorkerMessageLocked(WorkerCall* call, Actions* actions) {
  const size_t capacity = outbox_.size();
  const auto now = Clock::now();
  GenerateResponse& slot = outbox_[(out_head_ + out_size_) % capacity];
  slot.Clear();
  slot.Swap(call->response()->mutable_response());
  ++out_size_;
  ++messages_;
  if (slot.request_id().empty()) slot.set_request_id(submit_.request().request_id());
  if (slot.token_ids_size() > 0) {
    if (!first_token_) first_token_ = now;
    last_token_ = now;
    tokens_ += slot.token_ids_size();
  }
  if (slot.finish_reason() != smallmind::v1::FINISH_REASON_UNSPECIFIED) {
    finish_reason_ = slot.finish_reason();
    auto* timings = slot.mutable_timings();
    timings->set_worker_id(worker_id_);
    // The gateway's clock covers the hop, which the worker cannot see.
    if (first_token_) timings->set_ttft_ms(MsBetween(start_, *first_token_));
    decode_tokens_per_s_ = timings->decode_tokens_per_s();
    if (slot.has_usage()) prompt_tokens_ = slot.usage().prompt_tokens();
  }
  if (!write_in_flight_) {
    write_in_flight_ = true;
    actions->write = &outbox_[out_head_];
  }
  if (out_size_ < capacity) {
    read_state_ = ReadState::kPending;
    actions->read = call;
  } else {
    read_state_ = ReadState::kPaused;
  }
}

void GenerateReactor::OnWriteDone(bool ok) {
  Actions actions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    write_in_flight_ = false;
    out_head_ = (out_head_ + 1) % outbox_.size();
    --out_size_;
    if (!ok) cancelled_ = true;  // the client stream is gone
    if (cancelled_) {
      out_size_ = 0;
      StopReadingLocked(&actions);
      if (!finish_called_) FinishLocked(grpc::Status::CANCELLED, &actions);
    } else {
      if (out_size_ > 0) {
        write_in_flight_ = true;
        actions.write = &outbox_[out_head_];
      }
      if (read_state_ == ReadState::kPaused) {
        read_state_ = ReadState::kPending;
        actions.read = calls_.back().get();
      }
      MaybeFinishLocked(&actions);
    }
  }
  Perform(actions);
}

void GenerateReactor::OnCancel() {
  Actions actions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    out_size_ = write_in_flight_ ? 1 : 0;  // the slot being written stays until OnWriteDone
    StopReadingLocked(&actions);
    if (!write_in_flight_ && !finish_called_) FinishLocked(grpc::Status::CANCELLED, &actions);
  }
  Perform(actions);
}

void GenerateReactor::OnWorkerDone(WorkerCall* call, const grpc::Status& status) {
  Actions actions;
  std::shared_ptr<WorkerLink> retry_link;
  {
    std::lock_guard<std::mutex> lock(mu_);
    WorkerLink& link = call->link();
    link.EndRequest();
    if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
      link.SetHealthy(false, status.error_message());
    }
    if (!cancelled_ && !finish_called_ && !status.ok() && messages_ == 0 && Retriable(status) &&
        attempts_ <= env_->options.max_retries) {
      retry_link = env_->pool->Pick(link.index());
    }
    if (retry_link) {
      spdlog::info(
          "request {}: worker {} failed before the first token ({}: {}); retrying on "
          "worker {}",
          submit_.request().request_id(), link.index(),
          shared::StatusCodeName(shared::FromGrpcCode(status.error_code())), status.error_message(),
          retry_link->index());
    } else {
      worker_active_ = false;
      if (!cancelled_ && !finish_called_) {
        if (status.ok() || messages_ == 0) {
          pending_finish_ = status;  // the worker's own code and message reach the client
        } else {
          pending_finish_ =
              grpc::Status(grpc::StatusCode::UNAVAILABLE,
                           fmt::format("worker {} failed after tokens were sent: {}", link.index(),
                                       shared::FromGrpcStatus(status).ToString()));
        }
        MaybeFinishLocked(&actions);
      }
      CheckDoneLocked(&actions);
    }
  }
  Perform(actions);  // may delete this; a retry never does, since worker_active_ stays true
  if (retry_link) StartAttempt(std::move(retry_link));
}

void GenerateReactor::OnDone() {
  Actions actions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    server_done_ = true;
    CheckDoneLocked(&actions);
  }
  Perform(actions);
}

void GenerateReactor::StopReadingLocked(Actions* actions) {
  if (worker_active_ && !calls_.empty()) actions->cancel = calls_.back().get();
  if (read_state_ == ReadState::kPaused) {
    read_state_ = ReadState::kStopped;
    actions->release = calls_.back().get();
  }
}

void GenerateReactor::FinishLocked(grpc::Status status, Actions* actions) {
  SM_CHECK(!finish_called_) << "Finish called twice";
  finish_called_ = true;
  actions->finished_line = FinishedLineLocked(status);
  actions->finish = std::move(status);
}

void GenerateReactor::MaybeFinishLocked(Actions* actions) {
  if (pending_finish_ && !finish_called_ && !write_in_flight_ && out_size_ == 0) {
    FinishLocked(*pending_finish_, actions);
  }
}

void GenerateReactor::CheckDoneLocked(Actions* actions) {
  if (server_done_ && !worker_active_ && !destroyed_) {
    destroyed_ = true;
    actions->destroy = true;
  }
}

// Finish goes last: once it is called the client side may reach OnDone, after which only the
// worker side keeps this object alive.
void GenerateReactor::Perform(Actions& actions) {
  if (actions.write) StartWrite(actions.write);
  if (actions.read) actions.read->ReadNext();
  if (actions.cancel) actions.cancel->Cancel();
  if (actions.release) actions.release->Release();
  if (actions.finish) {
    spdlog::info("{}", actions.finished_line);
    Finish(*actions.finish);
  }
  if (actions.destroy) delete this;
}

std::string GenerateReactor::FinishedLineLocked(const grpc::Status& status) const {
  double ttft_ms = first_token_ ? MsBetween(start_, *first_token_) : 0.0;
  double tokens_per_s = decode_tokens_per_s_;
  if (tokens_per_s == 0 && tokens_ > 1 && first_token_ && last_token_ > *first_token_) {
    tokens_per_s = (tokens_ - 1) * 1000.0 / MsBetween(*first_token_, last_token_);
  }
  const std::string& id = submit_.request().request_id();
  return fmt::format(
      "request {} worker {} status {} finish {} prompt_tokens {} tokens {} ttft_ms {:.1f} "
      "tok_s {:.1f} attempts {}{}{}",
      id.empty() ? "-" : id, attempts_ > 0 ? std::to_string(worker_id_) : "-",
      shared::StatusCodeName(shared::FromGrpcCode(status.error_code())),
      smallmind::v1::FinishReason_Name(finish_reason_), prompt_tokens_, tokens_, ttft_ms,
      tokens_per_s, attempts_, status.ok() ? "" : ": ", status.error_message());
}

}  // namespace smallmind::gateway
