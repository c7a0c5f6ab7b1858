// JudgePoll: what one missed (or answered) Stats poll says about a worker, so that the gateway
// tells "slow" from "down" (issue 40): a poll that timed out while the worker's streams still
// deliver messages is a busy worker, not a dead one. Pure; used by WorkerClient::PollStats.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "shared/status.h"

namespace smallmind::gateway {

enum class PollVerdict {
  kHealthy,  // it answered
  kSlow,     // no answer in time, but a stream of it delivered within the window: keep its health
  kDown,     // it is unavailable (refused, reset, or silent with no stream progressing)
};

struct PollFacts {
  shared::StatusCode code = shared::StatusCode::kOk;  // the Stats call's outcome
  uint32_t in_flight = 0;                             // requests the gateway has open on it
  // Since a stream of this worker last delivered a message; nullopt = never.
  std::optional<std::chrono::milliseconds> since_progress;
};

// kSlow only for a deadline miss (a refused or reset connection is a death however recent the
// progress) with a request in flight whose worker delivered within `progress_window`.
PollVerdict JudgePoll(const PollFacts& facts, std::chrono::milliseconds progress_window);

const char* PollVerdictName(PollVerdict verdict);

}  // namespace smallmind::gateway
