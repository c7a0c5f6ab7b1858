// The gateway's admission (issue 10 item 2): at most `slots` requests hold a worker slot at once
// (--max-in-flight-per-worker x healthy workers); up to --max-queue more wait in priority order
// (higher first, FIFO within a priority); the excess is refused with RESOURCE_EXHAUSTED and a
// retry hint; a request whose deadline the queue ahead makes unreachable is refused early, and a
// waiting request whose deadline passes leaves with DEADLINE_EXCEEDED. Built by Gateway into the
// RelayEnv, so both front doors share it. Thread-safe; a timer thread expires deadlines.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gateway/admission/admission.h"
#include "gateway/admission/admission_options.h"
#include "gateway/admission/service_estimate.h"

namespace smallmind::gateway {

class AdmissionQueue final : public Admission {
 public:
  // `slots` says how many requests may hold a worker slot right now; 0 means no worker is
  // healthy, and then requests pass straight on to routing (which answers UNAVAILABLE) instead of
  // waiting. It is asked on every decision and at least every options.recheck while requests wait,
  // so a worker coming back is noticed.
  AdmissionQueue(AdmissionOptions options, std::function<size_t()> slots);
  // Nothing may be waiting (every relay holds the env that owns this queue).
  ~AdmissionQueue() override;

  void Enter(AdmissionWaiter* waiter, const ValidatedRequest& request,
             std::chrono::system_clock::time_point deadline) override;
  void Withdraw(AdmissionWaiter* waiter) override;
  void Leave(AdmissionWaiter* waiter, const std::optional<ServiceSample>& served) override;

  struct Counts {
    size_t waiting = 0;   // in the queue
    size_t admitted = 0;  // holding a slot
  };
  Counts counts() const;
  // True once exactly `n` requests wait in the queue (within `timeout`); for tests.
  bool WaitForWaiting(size_t n, std::chrono::milliseconds timeout) const;
  const ServiceEstimate& estimate() const { return estimate_; }
  // The served model's context length, once the workers reported it (ServiceEstimate's cap).
  void SetContextLength(size_t tokens) { estimate_.SetMaxPromptTokens(tokens); }

 private:
  // Queue order: higher priority first, then arrival.
  using Key = std::pair<int64_t, uint64_t>;  // {-priority, arrival number}
  struct Entry {
    AdmissionWaiter* waiter = nullptr;
    std::chrono::system_clock::time_point deadline;
    ServiceDemand demand;
  };
  using Answers = std::vector<std::pair<AdmissionWaiter*, AdmissionAnswer>>;

  // Refusal (or nullopt) for a request that would wait behind the entries before `key`.
  std::optional<AdmissionAnswer> CheckLocked(const Key& key, const Entry& entry, size_t slots,
                                             std::chrono::system_clock::time_point now) const;
  // Milliseconds the queued entries before `key` keep `slots` busy; nullopt before any estimate.
  std::optional<std::chrono::milliseconds> WaitAheadLocked(const Key& key, size_t slots) const;
  // Queues `entry`, or refuses it (or a lower-priority waiter) with a retry hint when full.
  void InsertLocked(const Key& key, Entry entry, size_t slots, Answers& answers);
  // Admits from the front while slots are free.
  void PumpLocked(Answers& answers);
  // Takes out entries whose deadline passed; returns the earliest deadline left.
  std::chrono::system_clock::time_point ExpireLocked(std::chrono::system_clock::time_point now,
                                                     Answers& answers);
  static void Send(Answers& answers);
  void TimerLoop(std::stop_token stop);

  const AdmissionOptions options_;
  const std::function<size_t()> slots_;
  ServiceEstimate estimate_;

  mutable std::mutex mu_;
  mutable std::condition_variable_any changed_;  // the queue changed (timer, WaitForWaiting)
  // Guarded by mu_.
  std::map<Key, Entry> queue_;
  std::unordered_map<AdmissionWaiter*, Key> where_;
  size_t admitted_ = 0;
  uint64_t arrivals_ = 0;
  uint64_t version_ = 0;  // bumped by every change the timer must see

  std::jthread timer_;  // last: stopped and joined first
};

}  // namespace smallmind::gateway
