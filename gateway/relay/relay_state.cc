#include "gateway/relay/relay_state.h"

#include <spdlog/fmt/fmt.h>

#include "shared/check.h"

namespace smallmind::gateway {
namespace {

using shared::Status;
using shared::StatusCode;
using Kind = RelayEvent::Kind;

// Failures another worker may not share: this one is down or its queue is full.
bool Retriable(const Status& s) {
  return s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kResourceExhausted;
}

Status ClientCancelled() {
  return {StatusCode::kCancelled,
          "cancelled by the client, a lost connection or a gateway shutdown"};
}

// The outcome of a worker call that is not retried. A worker failing after it sent messages
// breaks the stream: the client learns it as UNAVAILABLE. An expired deadline stays what it is.
Status OutcomeOf(const Status& status, size_t messages, uint32_t worker) {
  if (status.ok() || messages == 0 || status.code() == StatusCode::kDeadlineExceeded) {
    return status;
  }
  return shared::Unavailable(
      fmt::format("worker {} failed after tokens were sent: {}", worker, status.ToString()));
}

}  // namespace

const char* RelayPhaseName(RelayPhase phase) {
  switch (phase) {
    case RelayPhase::kNew: return "kNew";
    case RelayPhase::kAdmitting: return "kAdmitting";
    case RelayPhase::kRouting: return "kRouting";
    case RelayPhase::kAttempting: return "kAttempting";
    case RelayPhase::kStreaming: return "kStreaming";
    case RelayPhase::kDraining: return "kDraining";
    case RelayPhase::kFinished: return "kFinished";
    case RelayPhase::kDone: return "kDone";
  }
  return "?";
}

const char* WorkerReadName(WorkerRead read) {
  switch (read) {
    case WorkerRead::kNone: return "kNone";
    case WorkerRead::kReading: return "kReading";
    case WorkerRead::kPaused: return "kPaused";
    case WorkerRead::kClosing: return "kClosing";
  }
  return "?";
}

const char* ConsumerWriteName(ConsumerWrite write) {
  switch (write) {
    case ConsumerWrite::kIdle: return "kIdle";
    case ConsumerWrite::kDelivering: return "kDelivering";
    case ConsumerWrite::kDetached: return "kDetached";
  }
  return "?";
}

const char* RelayEventName(RelayEvent::Kind kind) {
  switch (kind) {
    case Kind::kBegin: return "Begin";
    case Kind::kRefuse: return "Refuse";
    case Kind::kAdmitted: return "Admitted";
    case Kind::kRouted: return "Routed";
    case Kind::kNoWorker: return "NoWorker";
    case Kind::kWorkerRead: return "WorkerRead";
    case Kind::kWorkerDone: return "WorkerDone";
    case Kind::kDelivered: return "Delivered";
    case Kind::kCancel: return "Cancel";
    case Kind::kDetach: return "Detach";
  }
  return "?";
}

void RelayEffects::MergeFrom(const RelayEffects& other) {
  route |= other.route;
  if (other.route_exclude) route_exclude = other.route_exclude;
  enqueue |= other.enqueue;
  drop_queued |= other.drop_queued;
  admit |= other.admit;
  withdraw |= other.withdraw;
  start_call |= other.start_call;
  deliver |= other.deliver;
  read |= other.read;
  cancel_call |= other.cancel_call;
  release_call |= other.release_call;
  release_admission |= other.release_admission;
  if (other.finish) {
    SM_CHECK(!finish) << "two Completes in one event";
    finish = other.finish;
  }
  destroy |= other.destroy;
}

std::string RelayEffects::ToString() const {
  std::string out;
  auto add = [&out](bool on, std::string_view name) {
    if (!on) return;
    if (!out.empty()) out += ' ';
    out += name;
  };
  add(route, route_exclude ? fmt::format("route(not {})", *route_exclude) : "route");
  add(enqueue, "enqueue");
  add(drop_queued, "drop_queued");
  add(admit, "admit");
  add(withdraw, "withdraw");
  add(start_call, "start_call");
  add(deliver, "deliver");
  add(read, "read");
  add(cancel_call, "cancel_call");
  add(release_call, "release_call");
  add(release_admission, "release_admission");
  add(finish.has_value(),
      finish ? fmt::format("finish({})", shared::StatusCodeName(finish->code())) : "");
  add(destroy, "destroy");
  return out;
}

RelayState::RelayState(size_t outbox_capacity, int max_retries)
    : capacity_(outbox_capacity), max_retries_(max_retries) {
  SM_CHECK(capacity_ > 0) << "outbox_capacity must be positive";
  SM_CHECK(max_retries_ >= 0) << "max_retries must not be negative";
}

std::string RelayState::Describe() const {
  return fmt::format(
      "phase={} worker={} consumer={} queued={}/{} cancelled={} admitted={} attempts={} "
      "messages={}",
      RelayPhaseName(phase_), WorkerReadName(worker_), ConsumerWriteName(consumer_), queued_,
      capacity_, cancelled_, admitted_, attempts_, messages_);
}

RelayEffects RelayState::Apply(const RelayEvent& event) {
  SM_CHECK(phase_ != RelayPhase::kDone)
      << "event " << RelayEventName(event.kind) << " after the relay was done";
  RelayEffects fx;
  switch (event.kind) {
    case Kind::kBegin: OnBegin(fx); break;
    case Kind::kRefuse: OnRefuse(event.status); break;
    case Kind::kAdmitted: OnAdmitted(event.status, fx); break;
    case Kind::kRouted: OnRouted(event.worker, fx); break;
    case Kind::kNoWorker: OnNoWorker(event.status); break;
    case Kind::kWorkerRead: OnWorkerRead(event.ok, fx); break;
    case Kind::kWorkerDone: OnWorkerDone(event.status, fx); break;
    case Kind::kDelivered: OnDelivered(event.ok, event.status, fx); break;
    case Kind::kCancel: OnCancel(event.status, fx); break;
    case Kind::kDetach: OnDetach(); break;
  }
  Settle(fx);
  CheckInvariants();
  return fx;
}

void RelayState::OnBegin(RelayEffects& fx) {
  SM_CHECK(phase_ == RelayPhase::kNew) << "Begin twice: " << Describe();
  phase_ = RelayPhase::kAdmitting;
  fx.admit = true;
}

void RelayState::OnRefuse(const Status& status) {
  SM_CHECK(phase_ == RelayPhase::kNew) << "Refuse after Begin: " << Describe();
  SM_CHECK(!status.ok()) << "Refuse needs an error";
  outcome_ = status;
  phase_ = RelayPhase::kDraining;
}

void RelayState::OnAdmitted(const Status& status, RelayEffects& fx) {
  SM_CHECK(phase_ == RelayPhase::kAdmitting) << "Admitted: " << Describe();
  if (cancelled_) {
    // Withdrawn: an admission granted in the meantime goes straight back.
    fx.release_admission = status.ok();
    phase_ = RelayPhase::kDraining;
  } else if (!status.ok()) {
    outcome_ = status;
    phase_ = RelayPhase::kDraining;
  } else {
    admitted_ = true;
    phase_ = RelayPhase::kRouting;
    fx.route = true;
  }
}

void RelayState::OnRouted(uint32_t worker, RelayEffects& fx) {
  SM_CHECK(phase_ == RelayPhase::kRouting && worker_ == WorkerRead::kNone)
      << "Routed: " << Describe();
  phase_ = RelayPhase::kAttempting;
  worker_ = WorkerRead::kReading;  // the call starts with its first read
  worker_id_ = worker;
  ++attempts_;
  fx.start_call = true;
}

void RelayState::OnNoWorker(const Status& status) {
  SM_CHECK(phase_ == RelayPhase::kRouting) << "NoWorker: " << Describe();
  // After a failed attempt the client learns what that worker said, not that no other was free.
  outcome_ = last_failure_ ? *last_failure_ : status;
  phase_ = RelayPhase::kDraining;
}

void RelayState::OnWorkerRead(bool ok, RelayEffects& fx) {
  SM_CHECK(worker_ == WorkerRead::kReading) << "WorkerRead without a read: " << Describe();
  if (!ok || cancelled_) {
    // The stream ended, or nobody wants the message: the call's OnDone comes next.
    worker_ = WorkerRead::kClosing;
    fx.release_call = true;
    return;
  }
  phase_ = RelayPhase::kStreaming;
  ++messages_;
  ++queued_;
  fx.enqueue = true;
  if (consumer_ == ConsumerWrite::kIdle) {
    consumer_ = ConsumerWrite::kDelivering;
    fx.deliver = true;
  }
  if (queued_ < capacity_) {
    fx.read = true;
  } else {
    worker_ = WorkerRead::kPaused;  // gRPC flow control now pushes back on the worker
  }
}

void RelayState::OnWorkerDone(const Status& status, RelayEffects& fx) {
  SM_CHECK(worker_ == WorkerRead::kClosing) << "WorkerDone before reading stopped: " << Describe();
  worker_ = WorkerRead::kNone;
  if (cancelled_) return;  // the outcome is CANCELLED already
  if (!status.ok() && messages_ == 0 && Retriable(status) && attempts_ <= max_retries_) {
    last_failure_ = status;
    phase_ = RelayPhase::kRouting;
    fx.route = true;
    fx.route_exclude = worker_id_;
    return;
  }
  outcome_ = OutcomeOf(status, messages_, worker_id_);
  phase_ = RelayPhase::kDraining;
}

void RelayState::OnDelivered(bool ok, const Status& why_failed, RelayEffects& fx) {
  SM_CHECK(consumer_ == ConsumerWrite::kDelivering && queued_ > 0)
      << "Delivered without a delivery: " << Describe();
  consumer_ = ConsumerWrite::kIdle;
  --queued_;
  if (!ok) return OnCancel(why_failed, fx);  // the consumer's stream is gone
  if (queued_ > 0) {
    consumer_ = ConsumerWrite::kDelivering;
    fx.deliver = true;
  }
  if (worker_ == WorkerRead::kPaused) {
    worker_ = WorkerRead::kReading;
    fx.read = true;
  }
}

void RelayState::OnCancel(const Status& why, RelayEffects& fx) {
  SM_CHECK(phase_ != RelayPhase::kNew && phase_ != RelayPhase::kRouting &&
           consumer_ != ConsumerWrite::kDetached)
      << "Cancel: " << Describe();
  if (cancelled_ || phase_ == RelayPhase::kFinished) return;  // late: the outcome went out
  cancelled_ = true;
  outcome_ = why.ok() ? ClientCancelled() : why;
  const size_t keep = consumer_ == ConsumerWrite::kDelivering ? 1 : 0;
  if (queued_ > keep) {
    queued_ = keep;
    fx.drop_queued = true;
  }
  if (phase_ == RelayPhase::kAdmitting) {
    fx.withdraw = true;  // Complete waits for the admission's answer
    return;
  }
  if (worker_ == WorkerRead::kReading) {
    fx.cancel_call = true;  // the outstanding read ends, then kWorkerRead closes the call
  } else if (worker_ == WorkerRead::kPaused) {
    fx.cancel_call = true;
    fx.release_call = true;
    worker_ = WorkerRead::kClosing;
  }
  phase_ = RelayPhase::kDraining;
}

void RelayState::OnDetach() {
  SM_CHECK(phase_ == RelayPhase::kFinished && consumer_ == ConsumerWrite::kIdle)
      << "Detach before Complete: " << Describe();
  consumer_ = ConsumerWrite::kDetached;
}

void RelayState::Settle(RelayEffects& fx) {
  const bool outcome_known = phase_ == RelayPhase::kDraining || phase_ == RelayPhase::kFinished;
  if (admitted_ && outcome_known && worker_ == WorkerRead::kNone) {
    admitted_ = false;
    fx.release_admission = true;
  }
  if (phase_ == RelayPhase::kDraining && consumer_ == ConsumerWrite::kIdle && queued_ == 0) {
    phase_ = RelayPhase::kFinished;
    fx.finish = *outcome_;
  }
  if (phase_ == RelayPhase::kFinished && consumer_ == ConsumerWrite::kDetached &&
      worker_ == WorkerRead::kNone) {
    phase_ = RelayPhase::kDone;
    fx.destroy = true;
  }
}

void RelayState::CheckInvariants() const {
  const auto at_least = [this](RelayPhase p) { return phase_ >= p; };
  // One delivery in flight, taken from a bounded outbox.
  SM_CHECK(queued_ <= capacity_) << Describe();
  SM_CHECK(consumer_ != ConsumerWrite::kDelivering || queued_ > 0) << Describe();
  // Reading stops when the outbox is full and resumes when it drains.
  SM_CHECK(worker_ != WorkerRead::kReading || queued_ < capacity_) << Describe();
  SM_CHECK(worker_ != WorkerRead::kPaused || (queued_ == capacity_ && !cancelled_)) << Describe();
  // A worker call exists only between routing and the end; none is open while admitting.
  SM_CHECK(worker_ == WorkerRead::kNone || at_least(RelayPhase::kAttempting)) << Describe();
  SM_CHECK(phase_ != RelayPhase::kAttempting || (messages_ == 0 && worker_ != WorkerRead::kNone))
      << Describe();
  SM_CHECK(phase_ != RelayPhase::kStreaming || worker_ != WorkerRead::kNone) << Describe();
  // The outcome is known from kDraining on, and a cancelled request is never streaming.
  SM_CHECK(outcome_.has_value() ==
           (at_least(RelayPhase::kDraining) || (cancelled_ && phase_ == RelayPhase::kAdmitting)))
      << Describe();
  // Complete only once everything before it was delivered; Detach only after Complete.
  SM_CHECK(!at_least(RelayPhase::kFinished) ||
           (queued_ == 0 && consumer_ != ConsumerWrite::kDelivering))
      << Describe();
  SM_CHECK(consumer_ != ConsumerWrite::kDetached || at_least(RelayPhase::kFinished)) << Describe();
  // Done (deleted) only when both sides are done and the admission slot is back.
  SM_CHECK(phase_ != RelayPhase::kDone ||
           (consumer_ == ConsumerWrite::kDetached && worker_ == WorkerRead::kNone && !admitted_))
      << Describe();
  SM_CHECK(!admitted_ || at_least(RelayPhase::kRouting)) << Describe();
  SM_CHECK(attempts_ <= max_retries_ + 1) << Describe();
}

}  // namespace smallmind::gateway
