// What the gateway learns about one request on its way: attempts, tokens, time to first token,
// and the one info line logged when it ends (DESIGN §6; issue 10's metrics read the same record).
// Also stamps each worker message with what only the gateway knows. Owned by one RequestRelay and
// used under its mutex; not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "gateway/admission/service_estimate.h"
#include "gateway/metrics/request_metrics.h"
#include "shared/status.h"
#include "smallmind/v1/inference.pb.h"

namespace smallmind::gateway {

class RequestRecord {
 public:
  using Clock = std::chrono::steady_clock;

  // `metrics` (may be null) observes the request's tokens and end (RequestTracker).
  RequestRecord(Clock::time_point start, RequestMetrics* metrics)
      : start_(start), tracker_(metrics, start) {}

  // `prompt_tokens` is 0 for a text prompt of `prompt_bytes` (the worker tokenizes it).
  void SetRequest(std::string request_id, uint32_t prompt_tokens, size_t prompt_bytes,
                  uint32_t max_new_tokens);
  void OnAttempt(uint32_t worker_id);
  // Fills in the request id when the worker left it out, and on the last message the gateway's
  // timings.worker_id and ttft_ms (its clock covers the hop, which the worker cannot see).
  void OnMessage(smallmind::v1::GenerateResponse& message, Clock::time_point now);

  const std::string& request_id() const { return request_id_; }
  Clock::time_point start() const { return start_; }
  double MsSinceStart(Clock::time_point now) const;

  // What the last message said about the worker's speed; nullopt unless the request finished
  // with the worker's timings.
  std::optional<ServiceSample> Served() const;

  // "request ID worker W status CODE finish REASON prompt_tokens P tokens T ttft_ms X tok_s Y
  // attempts A[: message]"
  std::string FinishedLine(const shared::Status& status) const;
  // The request ended with `status`: counted once in the metrics, with its prompt tokens.
  void OnFinished(const shared::Status& status);

 private:
  const Clock::time_point start_;
  std::string request_id_;
  uint32_t prompt_tokens_ = 0;
  size_t prompt_bytes_ = 0;
  uint32_t max_new_tokens_ = 0;
  int attempts_ = 0;
  uint32_t worker_id_ = 0;
  size_t tokens_ = 0;
  std::optional<Clock::time_point> first_token_;
  Clock::time_point last_token_;
  smallmind::v1::FinishReason finish_reason_ = smallmind::v1::FINISH_REASON_UNSPECIFIED;
  uint32_t completion_tokens_ = 0;  // from the last message's usage
  uint32_t draft_tokens_ = 0;       // from the last message's usage
  uint32_t accepted_draft_tokens_ = 0;
  std::optional<double> queue_ms_;   // the last message's timings.queue_ms
  double prefill_tokens_per_s_ = 0;  // the worker's figures, when it gave them
  double decode_tokens_per_s_ = 0;
  RequestTracker tracker_;
};

}  // namespace smallmind::gateway
