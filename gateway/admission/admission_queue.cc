#include "gateway/admission/admission_queue.h"

#include <algorithm>
#include <iterator>
#include <string>

#include <spdlog/fmt/fmt.h>

#include "shared/check.h"

namespace smallmind::gateway {
namespace {

using SystemClock = std::chrono::system_clock;
using std::chrono::milliseconds;

constexpr auto kNoDeadline = SystemClock::time_point::max();

int64_t Ms(SystemClock::duration d) { return std::chrono::duration_cast<milliseconds>(d).count(); }

// A refusal without a retry hint.
AdmissionAnswer Refusal(shared::StatusCode code, std::string message) {
  return AdmissionAnswer{shared::Status(code, std::move(message)), std::nullopt};
}

ServiceDemand DemandOf(const ValidatedRequest& request) {
  const smallmind::v1::GenerateRequest& proto = request.proto();
  ServiceDemand demand;
  demand.prompt_tokens = request.prompt_token_count();
  demand.prompt_bytes = proto.prompt().size();
  demand.max_new_tokens = proto.stopping().max_new_tokens();
  return demand;
}

}  // namespace

AdmissionQueue::AdmissionQueue(AdmissionOptions options, std::function<size_t()> slots)
    : options_(options),
      slots_(std::move(slots)),
      timer_([this](std::stop_token stop) { TimerLoop(stop); }) {}

AdmissionQueue::~AdmissionQueue() {
  timer_.request_stop();
  timer_.join();
  SM_CHECK(queue_.empty()) << queue_.size() << " requests still wait in a destroyed queue";
}

void AdmissionQueue::Enter(AdmissionWaiter* waiter, const ValidatedRequest& request,
                           SystemClock::time_point deadline) {
  Answers answers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const Key key{-static_cast<int64_t>(request.proto().priority()), arrivals_++};
    Entry entry{waiter, deadline, DemandOf(request)};
    const size_t slots = slots_();
    if (auto refusal = CheckLocked(key, entry, slots, SystemClock::now())) {
      answers.emplace_back(waiter, std::move(*refusal));
    } else if (slots == 0 || (queue_.empty() && admitted_ < slots)) {
      ++admitted_;
      answers.emplace_back(waiter, AdmissionAnswer{});
    } else {
      InsertLocked(key, std::move(entry), slots, answers);
    }
    ++version_;
  }
  changed_.notify_all();
  Send(answers);
}

std::optional<AdmissionAnswer> AdmissionQueue::CheckLocked(const Key& key, const Entry& entry,
                                                           size_t slots,
                                                           SystemClock::time_point now) const {
  if (entry.deadline != kNoDeadline && entry.deadline <= now) {
    return Refusal(shared::StatusCode::kDeadlineExceeded,
                   "the deadline had passed when the request reached the gateway");
  }
  if (!options_.deadline_admission || entry.deadline == kNoDeadline) return std::nullopt;
  const bool admit_now = slots == 0 || (queue_.empty() && admitted_ < slots);
  const auto own = estimate_.Estimate(entry.demand);
  const auto ahead = admit_now ? milliseconds(0) : WaitAheadLocked(key, slots);
  if (!own || !ahead) return std::nullopt;  // nothing measured yet
  const int64_t left = Ms(entry.deadline - now);
  if (ahead->count() + own->count() <= left) return std::nullopt;
  return Refusal(
      shared::StatusCode::kDeadlineExceeded,
      fmt::format("refused early: the deadline is {} ms away, but about {} ms of requests wait "
                  "ahead of this one for {} worker slots and it needs about {} ms itself "
                  "(estimated from the measured prefill and decode rates and max_new_tokens)",
                  left, ahead->count(), slots, own->count()));
}

std::optional<milliseconds> AdmissionQueue::WaitAheadLocked(const Key& key, size_t slots) const {
  milliseconds total(0);
  for (auto it = queue_.begin(); it != queue_.end() && it->first < key; ++it) {
    const auto one = estimate_.Estimate(it->second.demand);
    if (!one) return std::nullopt;
    total += *one;
  }
  return total / std::max<size_t>(slots, 1);
}

void AdmissionQueue::InsertLocked(const Key& key, Entry entry, size_t slots, Answers& answers) {
  if (queue_.size() >= options_.max_queue) {
    // Full: the newcomer takes the place of the last waiter if that one has a lower priority.
    const auto last = queue_.empty() ? queue_.end() : std::prev(queue_.end());
    const bool displaces = last != queue_.end() && key.first < last->first.first;
    const milliseconds retry = std::max(
        milliseconds(1), WaitAheadLocked(key, slots).value_or(options_.retry_after_unmeasured));
    std::string why =
        fmt::format("the gateway queue is full ({} waiting, --max-queue {}); retry in about {} ms",
                    queue_.size(), options_.max_queue, retry.count());
    if (!displaces) {
      answers.emplace_back(entry.waiter, AdmissionAnswer{shared::ResourceExhausted(why), retry});
      return;
    }
    why += " (a request of higher priority took its place)";
    answers.emplace_back(last->second.waiter,
                         AdmissionAnswer{shared::ResourceExhausted(why), retry});
    where_.erase(last->second.waiter);
    queue_.erase(last);
  }
  where_.emplace(entry.waiter, key);
  queue_.emplace(key, std::move(entry));
}

void AdmissionQueue::PumpLocked(Answers& answers) {
  const size_t slots = slots_();
  while (!queue_.empty() && (slots == 0 || admitted_ < slots)) {
    auto front = queue_.begin();
    answers.emplace_back(front->second.waiter, AdmissionAnswer{});
    where_.erase(front->second.waiter);
    queue_.erase(front);
    ++admitted_;
  }
}

void AdmissionQueue::Withdraw(AdmissionWaiter* waiter) {
  Answers answers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = where_.find(waiter);
    if (it == where_.end()) return;  // admitted or answered already
    queue_.erase(it->second);
    where_.erase(it);
    ++version_;
    answers.emplace_back(waiter, Refusal(shared::StatusCode::kCancelled,
                                         "cancelled while waiting in the gateway queue"));
  }
  changed_.notify_all();
  Send(answers);
}

void AdmissionQueue::Leave(AdmissionWaiter*, const std::optional<ServiceSample>& served) {
  if (served) estimate_.Observe(*served);
  Answers answers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    SM_CHECK(admitted_ > 0) << "Leave without an admitted request";
    --admitted_;
    PumpLocked(answers);
    ++version_;
  }
  changed_.notify_all();
  Send(answers);
}

AdmissionQueue::Counts AdmissionQueue::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {queue_.size(), admitted_};
}

bool AdmissionQueue::WaitForWaiting(size_t n, milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return changed_.wait_for(lock, timeout, [&] { return queue_.size() == n; });
}

SystemClock::time_point AdmissionQueue::ExpireLocked(SystemClock::time_point now,
                                                     Answers& answers) {
  SystemClock::time_point earliest = kNoDeadline;
  for (auto it = queue_.begin(); it != queue_.end();) {
    const Entry& entry = it->second;
    if (entry.deadline > now) {
      earliest = std::min(earliest, entry.deadline);
      ++it;
      continue;
    }
    answers.emplace_back(entry.waiter, Refusal(shared::StatusCode::kDeadlineExceeded,
                                               "the deadline passed while the request waited in "
                                               "the gateway queue for a worker slot"));
    where_.erase(entry.waiter);
    it = queue_.erase(it);
  }
  return earliest;
}

// Wakes at the earliest deadline in the queue, and every options.recheck while requests wait (a
// worker that became healthy adds slots without any request leaving).
void AdmissionQueue::TimerLoop(std::stop_token stop) {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop.stop_requested()) {
    Answers answers;
    const auto earliest = ExpireLocked(SystemClock::now(), answers);
    PumpLocked(answers);
    if (!answers.empty()) {
      lock.unlock();
      changed_.notify_all();
      Send(answers);
      lock.lock();
      continue;
    }
    if (queue_.empty()) {
      changed_.wait(lock, stop, [this] { return !queue_.empty(); });
    } else {
      const auto wake = std::min(earliest, SystemClock::now() + options_.recheck);
      const uint64_t seen = version_;
      changed_.wait_until(lock, stop, wake, [&] { return version_ != seen; });
    }
  }
}

void AdmissionQueue::Send(Answers& answers) {
  for (auto& [waiter, answer] : answers) waiter->OnAdmitted(std::move(answer));
}

}  // namespace smallmind::gateway
