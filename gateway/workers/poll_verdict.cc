#include "gateway/workers/poll_verdict.h"

namespace smallmind::gateway {

PollVerdict JudgePoll(const PollFacts& facts, std::chrono::milliseconds progress_window) {
  if (facts.code == shared::StatusCode::kOk) return PollVerdict::kHealthy;
  const bool late = facts.code == shared::StatusCode::kDeadlineExceeded;
  const bool progressing = facts.in_flight > 0 && facts.since_progress.has_value() &&
                           *facts.since_progress <= progress_window;
  return late && progressing ? PollVerdict::kSlow : PollVerdict::kDown;
}

const char* PollVerdictName(PollVerdict verdict) {
  switch (verdict) {
    case PollVerdict::kHealthy: return "healthy";
    case PollVerdict::kSlow: return "slow";
    case PollVerdict::kDown: return "down";
  }
  return "unknown";
}

}  // namespace smallmind::gateway
