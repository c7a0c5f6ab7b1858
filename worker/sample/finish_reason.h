// FinishReason: why a request's generation ended, as the stop checker, the scheduler and the
// service report it. Plain enum; thread-safe.
#pragma once

namespace smallmind::worker {

enum class FinishReason {
  kNone,       // still generating
  kLength,     // max_new_tokens reached
  kStop,       // a stop string matched
  kEos,        // the model produced its end token
  kCancelled,  // the client cancelled or disconnected
};

constexpr const char* FinishReasonName(FinishReason reason) {
  switch (reason) {
    case FinishReason::kNone: return "NONE";
    case FinishReason::kLength: return "LENGTH";
    case FinishReason::kStop: return "STOP";
    case FinishReason::kEos: return "EOS";
    case FinishReason::kCancelled: return "CANCELLED";
  }
  return "UNKNOWN";
}

}  // namespace smallmind::worker
