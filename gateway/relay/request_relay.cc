#include "gateway/relay/request_relay.h"

#include <utility>

#include <spdlog/spdlog.h>

#include "shared/check.h"

namespace smallmind::gateway {

using Clock = RequestRecord::Clock;
using Kind = RelayEvent::Kind;

RequestRelay::RequestRelay(std::shared_ptr<RelayEnv> env, RelayConsumer* consumer)
    : env_(std::move(env)),
      consumer_(consumer),
      state_(env_->options.outbox_capacity, env_->options.max_retries),
      record_(Clock::now(), env_->metrics.get()),
      outbox_(env_->options.outbox_capacity) {
  env_->active.Add();
}

// Everything that refers to a channel goes before the count drops: the env's owner destroys the
// channels once it sees zero, on its own thread. Were this relay (often deleted on a gRPC callback
// thread) the one to drop the last channel, gRPC 1.51 would tear down its callback queue under
// that very thread and abort ("ref_counted.h:183 prior > 0").
RequestRelay::~RequestRelay() {
  calls_.clear();
  ActiveRequests& active = env_->active;  // the owner keeps the env until the count is zero
  env_.reset();
  active.Remove();
}

void RequestRelay::Start(shared::Result<ValidatedRequest> request,
                         std::chrono::system_clock::time_point deadline) {
  deadline_ = deadline;
  if (!request.ok()) return Handle(RelayEvent::Refuse(request.status()));
  Handle(RelayEvent::Begin(), [&] {
    const smallmind::v1::GenerateRequest& proto = request->proto();
    record_.SetRequest(request->request_id(), static_cast<uint32_t>(request->prompt_token_count()),
                       proto.prompt().size(), proto.stopping().max_new_tokens());
    *submit_.mutable_request() = request->proto();
    tokens_ = WorkerPool::RequestTokens(*request);
    request_.emplace(std::move(request).value());
  });
}

// A gRPC server ends a call at its deadline: a pending write fails, then OnCancel comes. Either
// one may come a few milliseconds before deadline_ as the server context reports it (7-8 ms in
// tests/integration/gateway_deadline_test), so an end within kDeadlineSlack of the deadline counts
// as the deadline, for the client, the log line and the metrics.
shared::Status RequestRelay::EndedBy() const {
  constexpr auto kDeadlineSlack = std::chrono::milliseconds(50);
  if (deadline_ != std::chrono::system_clock::time_point::max() &&
      std::chrono::system_clock::now() + kDeadlineSlack >= deadline_) {
    return {shared::StatusCode::kDeadlineExceeded,
            "the deadline passed before the request finished"};
  }
  return {};  // plain CANCELLED
}

void RequestRelay::OnDelivered(bool ok) {
  Handle(RelayEvent::Delivered(ok, ok ? shared::Status() : EndedBy()));
}

void RequestRelay::Cancel() { Handle(RelayEvent::Cancel(EndedBy())); }

void RequestRelay::Detach() { Handle(RelayEvent::Detach()); }

void RequestRelay::OnAdmitted(AdmissionAnswer answer) {
  Handle(RelayEvent::Admitted(answer.status), [&] { retry_after_ = answer.retry_after; });
}

void RequestRelay::OnWorkerRead(WorkerAttempt* call, bool ok) {
  Handle(RelayEvent::WorkerReadDone(ok), [&] {
    SM_CHECK(!calls_.empty() && call == calls_.back().get()) << "a read from an old attempt";
  });
}

void RequestRelay::OnWorkerDone(WorkerAttempt* call, shared::Status status) {
  Handle(RelayEvent::WorkerDone(status), [&] {
    SM_CHECK(!calls_.empty() && call == calls_.back().get()) << "the end of an old attempt";
    WorkerClient& link = call->link();
    link.EndRequest(tokens_);
    if (status.code() == shared::StatusCode::kUnavailable) {
      link.SetHealthy(false, status.message());
    }
  });
}

// Every entry point comes through here. The relay is deleted only once its state is kDone and no
// other thread is between its lock and the end of its effects, so effects may touch members in
// any order; the consumer is never called after Complete.
template <typename Before>
void RequestRelay::Handle(const RelayEvent& event, Before before) {
  Actions actions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++busy_;
    before();
    ApplyLocked(event, actions);
  }
  Perform(actions);
  bool last = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    last = --busy_ == 0 && state_.phase() == RelayPhase::kDone;
  }
  if (last) delete this;
}

void RequestRelay::Handle(const RelayEvent& event) {
  Handle(event, [] {});
}

void RequestRelay::ApplyLocked(const RelayEvent& event, Actions& actions) {
  actions.fx = state_.Apply(event);
  RelayEffects& fx = actions.fx;
  if (event.kind == Kind::kDelivered) outbox_.Pop();  // the head was the delivered message
  if (fx.enqueue) {
    smallmind::v1::GenerateResponse& slot = outbox_.Push();
    slot.Swap(calls_.back()->response()->mutable_response());
    record_.OnMessage(slot, Clock::now());
  }
  if (fx.drop_queued) outbox_.Truncate(state_.queued());
  if (fx.route) RouteLocked(event, actions);
  SM_CHECK(outbox_.size() == state_.queued())
      << "outbox holds " << outbox_.size() << ", state says " << state_.Describe();
  if (!calls_.empty()) actions.call = calls_.back().get();
  if (fx.deliver) actions.deliver = &outbox_.front();
  if (fx.release_admission) actions.served = record_.Served();
  if (fx.finish) {
    record_.OnFinished(*fx.finish);
    actions.outcome.status = *fx.finish;
    if (fx.finish->code() == shared::StatusCode::kResourceExhausted) {
      actions.outcome.retry_after = retry_after_;
    }
    actions.finished_line = record_.FinishedLine(*fx.finish);
  }
}

void RequestRelay::RouteLocked(const RelayEvent& cause, Actions& actions) {
  RelayEffects& fx = actions.fx;
  fx.route = false;  // carried out here
  std::shared_ptr<WorkerClient> link = env_->pool->Pick(*request_, fx.route_exclude);
  if (!link) {
    fx.MergeFrom(state_.Apply(RelayEvent::NoWorker(env_->pool->NoWorkerStatus())));
    return;
  }
  if (fx.route_exclude) {
    spdlog::info("request {}: worker {} failed before the first token ({}); retrying on worker {}",
                 record_.request_id(), *fx.route_exclude, cause.status.ToString(), link->index());
  }
  const uint32_t worker = link->index();
  record_.OnAttempt(worker);
  submit_.set_gateway_queue_ms(record_.MsSinceStart(Clock::now()));
  calls_.push_back(
      std::make_unique<WorkerAttempt>(static_cast<WorkerAttempt::Owner*>(this), std::move(link)));
  fx.MergeFrom(state_.Apply(RelayEvent::Routed(worker)));
}

// In RelayEffects order. Admission calls back inline; the consumer may call back inline.
void RequestRelay::Perform(const Actions& actions) {
  const RelayEffects& fx = actions.fx;
  if (fx.admit) env_->admission->Enter(this, *request_, deadline_);
  if (fx.withdraw) env_->admission->Withdraw(this);
  // submit_ is not written again until this call's OnDone.
  if (fx.start_call) actions.call->Start(&submit_, deadline_);
  if (fx.deliver) consumer_->Deliver(*actions.deliver);
  if (fx.read) actions.call->ReadNext();
  if (fx.cancel_call) actions.call->Cancel();
  if (fx.release_call) actions.call->Release();
  if (fx.release_admission) env_->admission->Leave(this, actions.served);
  if (fx.finish) {
    spdlog::info("{}", actions.finished_line);
    consumer_->Complete(actions.outcome);
  }
}

}  // namespace smallmind::gateway
