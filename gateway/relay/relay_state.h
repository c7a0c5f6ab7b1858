// The states of one relayed request as a pure transition function: RelayState::Apply takes an
// event and returns the effects to carry out. No gRPC, clock or I/O, so every transition is tested
// as a table (tests/gateway/relay_state_test.cc). Owned by one RequestRelay, which serialises
// Apply under its mutex; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "shared/status.h"

namespace smallmind::gateway {

// Where the request's journey stands. It moves forward only, except kAttempting -> kRouting for a
// retry:
//
//   kNew -Begin-> kAdmitting -Admitted(OK)-> kRouting -Routed-> kAttempting -WorkerRead(msg)->
//   kStreaming -WorkerDone-> kDraining -(outbox empty)-> kFinished -(Detach, worker done)-> kDone
//
//   kNew -Refuse-> kDraining; kAdmitting -Admitted(error)-> kDraining; kRouting -NoWorker->
//   kDraining; kAttempting -WorkerDone(UNAVAILABLE|RESOURCE_EXHAUSTED, retries left)-> kRouting;
//   any phase before kFinished -Cancel-> kDraining (kAdmitting waits for Admitted first).
enum class RelayPhase {
  kNew,         // built, not started
  kAdmitting,   // waiting for Admission to let it in (queue, priority, deadline: issue 10)
  kRouting,     // admitted; a worker is being picked (answered within the same event)
  kAttempting,  // a worker call is open and has sent nothing: a failure may still be retried
  kStreaming,   // the worker has sent messages; they reach the consumer through the outbox
  kDraining,    // the outcome is known; the outbox empties before the consumer's Complete
  kFinished,    // Complete was issued (once); waiting for the consumer and the worker to be done
  kDone,        // both sides done: the relay deletes itself
};

// The current worker call. A call holds a gRPC hold from its start until kClosing, so that a read
// can be started from the consumer's side while reading is paused.
enum class WorkerRead {
  kNone,     // no call open
  kReading,  // one read outstanding
  kPaused,   // the outbox is full; no read outstanding, hold kept
  kClosing,  // no more reads, hold released; the call's OnDone is next
};

// The consumer (client) side: at most one delivery outstanding.
enum class ConsumerWrite {
  kIdle,
  kDelivering,  // the outbox head was handed over; OnDelivered is next
  kDetached,    // the consumer is gone for good (after Complete)
};

const char* RelayPhaseName(RelayPhase phase);
const char* WorkerReadName(WorkerRead read);
const char* ConsumerWriteName(ConsumerWrite write);

struct RelayEvent {
  enum class Kind {
    kBegin,       // the request is valid: ask for admission
    kRefuse,      // the request is invalid: `status` is its error
    kAdmitted,    // Admission answered with `status` (OK = go on)
    kRouted,      // worker `worker` was picked; its call starts
    kNoWorker,    // no worker could be picked: `status` says why
    kWorkerRead,  // the outstanding read completed (`ok` = a message arrived)
    kWorkerDone,  // the worker call ended with `status`
    kDelivered,   // the consumer finished the outstanding delivery (`ok` = written; else `status`)
    kCancel,      // the consumer cancelled or went away (`status`: why, when not plain CANCELLED)
    kDetach,      // the consumer will make no more calls
  };
  Kind kind;
  bool ok = true;
  uint32_t worker = 0;
  shared::Status status;

  static RelayEvent Begin() { return Make(Kind::kBegin); }
  static RelayEvent Refuse(shared::Status s) { return Make(Kind::kRefuse, true, 0, std::move(s)); }
  static RelayEvent Admitted(shared::Status s) {
    return Make(Kind::kAdmitted, true, 0, std::move(s));
  }
  static RelayEvent Routed(uint32_t worker) { return Make(Kind::kRouted, true, worker); }
  static RelayEvent NoWorker(shared::Status s) {
    return Make(Kind::kNoWorker, true, 0, std::move(s));
  }
  static RelayEvent WorkerReadDone(bool ok) { return Make(Kind::kWorkerRead, ok); }
  static RelayEvent WorkerDone(shared::Status s) {
    return Make(Kind::kWorkerDone, true, 0, std::move(s));
  }
  // `why_failed`: with ok = false, why the consumer's stream is gone when not plain CANCELLED.
  static RelayEvent Delivered(bool ok, shared::Status why_failed = {}) {
    return Make(Kind::kDelivered, ok, 0, std::move(why_failed));
  }
  static RelayEvent Cancel(shared::Status why = {}) {
    return Make(Kind::kCancel, true, 0, std::move(why));
  }
  static RelayEvent Detach() { return Make(Kind::kDetach); }

 private:
  static RelayEvent Make(Kind kind, bool ok = true, uint32_t worker = 0, shared::Status s = {}) {
    return RelayEvent{kind, ok, worker, std::move(s)};
  }
};

const char* RelayEventName(RelayEvent::Kind kind);

// What an event asks the relay to do. The first group is carried out under the relay's lock, before
// the next event; the second after the lock is released, in the order listed.
struct RelayEffects {
  // Under the lock.
  bool route = false;                     // pick a worker; answer with kRouted or kNoWorker
  std::optional<uint32_t> route_exclude;  // set when retrying: the worker that just failed
  bool enqueue = false;                   // the message just read joins the outbox tail
  bool drop_queued = false;               // the outbox keeps only the head being delivered
  // After the lock.
  bool admit = false;                    // Admission::Enter
  bool withdraw = false;                 // Admission::Withdraw (cancelled while waiting)
  bool start_call = false;               // start the worker call picked by kRouted
  bool deliver = false;                  // hand the outbox head to the consumer
  bool read = false;                     // start the next read on the worker call
  bool cancel_call = false;              // cancel the worker call
  bool release_call = false;             // drop the worker call's hold: no more reads
  bool release_admission = false;        // Admission::Leave: the request's worker work is over
  std::optional<shared::Status> finish;  // the consumer's one Complete, with the outcome
  bool destroy = false;                  // both sides are done

  // Adds `other`'s effects (a follow-up event applied under the same lock).
  void MergeFrom(const RelayEffects& other);
  // "route deliver read ..." in the order above, for tests and failure messages.
  std::string ToString() const;
};

class RelayState {
 public:
  // `outbox_capacity` (>= 1) messages are held for a slow consumer before reading pauses; a
  // request failing before its first message is retried on another worker `max_retries` times.
  RelayState(size_t outbox_capacity, int max_retries);

  // Every transition of the relay happens here. Aborts (SM_CHECK) on an event the current state
  // cannot receive and when an invariant breaks afterwards (see CheckInvariants).
  RelayEffects Apply(const RelayEvent& event);

  RelayPhase phase() const { return phase_; }
  WorkerRead worker() const { return worker_; }
  ConsumerWrite consumer() const { return consumer_; }
  size_t queued() const { return queued_; }  // outbox messages, the one being delivered included
  bool cancelled() const { return cancelled_; }
  int attempts() const { return attempts_; }
  // "phase=kStreaming worker=kReading consumer=kIdle queued=1 ..."
  std::string Describe() const;

 private:
  void OnBegin(RelayEffects& fx);
  void OnRefuse(const shared::Status& status);
  void OnAdmitted(const shared::Status& status, RelayEffects& fx);
  void OnRouted(uint32_t worker, RelayEffects& fx);
  void OnNoWorker(const shared::Status& status);
  void OnWorkerRead(bool ok, RelayEffects& fx);
  void OnWorkerDone(const shared::Status& status, RelayEffects& fx);
  void OnDelivered(bool ok, const shared::Status& why_failed, RelayEffects& fx);
  void OnCancel(const shared::Status& why, RelayEffects& fx);
  void OnDetach();
  // After every event: give the admission back once the worker side is over, issue Complete once
  // the outbox is drained, and finish once both sides are done.
  void Settle(RelayEffects& fx);
  void CheckInvariants() const;

  const size_t capacity_;
  const int max_retries_;
  RelayPhase phase_ = RelayPhase::kNew;
  WorkerRead worker_ = WorkerRead::kNone;
  ConsumerWrite consumer_ = ConsumerWrite::kIdle;
  size_t queued_ = 0;
  bool cancelled_ = false;                      // the consumer cancelled or went away
  bool admitted_ = false;                       // holds an admission slot not yet released
  int attempts_ = 0;                            // worker calls started
  uint32_t worker_id_ = 0;                      // of the latest attempt
  size_t messages_ = 0;                         // received from workers; > 0 rules out a retry
  std::optional<shared::Status> outcome_;       // set from kDraining on
  std::optional<shared::Status> last_failure_;  // the latest retried worker failure
};

}  // namespace smallmind::gateway
