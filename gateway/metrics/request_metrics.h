// RequestMetrics: the request-level Prometheus families (DESIGN §6) that the gateway's relay core
// observes for every Generate stream, whichever door it came in by: requests by status, time to
// first token, inter-token latency, prompt and generated tokens, and vLLM's per-request phase
// histograms (end-to-end, queue, prefill, decode). Families live in a
// prometheus::Registry the caller owns. Thread-safe (prometheus-cpp metrics are atomic).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "shared/status.h"

namespace smallmind::gateway {

// Histogram upper bounds from `lo` to `hi` seconds, about 1.5x apart (1, 1.5, 2, 3, 5, 7.5 per
// decade, `hi` last), so histogram_quantile interpolates within ~50% anywhere in the range.
std::vector<double> LatencyBuckets(double lo, double hi);

// Where one successful request's time went, by the gateway's clock (vLLM's phase histograms).
struct RequestLatencies {
  using Seconds = std::chrono::duration<double>;
  Seconds e2e{0};                  // accepted -> last message
  std::optional<Seconds> queue;    // waiting, gateway queue and worker queue (timings.queue_ms)
  std::optional<Seconds> prefill;  // end of the queue -> first token
  std::optional<Seconds> decode;   // first token -> last token
};

class RequestMetrics {
 public:
  using Seconds = std::chrono::duration<double>;

  // Registers the families in `registry`, which must outlive this object. A non-empty `model`
  // labels every series model="`model`" (one RequestMetrics per served model share the
  // families); "" = no model label.
  explicit RequestMetrics(prometheus::Registry& registry, const std::string& model = "");
  RequestMetrics(const RequestMetrics&) = delete;
  RequestMetrics& operator=(const RequestMetrics&) = delete;

  // The first message with tokens reached the gateway `ttft` after the request was accepted.
  // `tokens` of them came in it (all counted as generated, none as inter-token gaps).
  void ObserveFirstTokens(Seconds ttft, size_t tokens);
  // A later message brought `tokens` tokens `gap` after the previous token-bearing message. Tokens
  // are batched (one message per engine step or per write the client let through), so a group of
  // k tokens counts as k inter-token gaps of gap / k each: the histogram's count is every token
  // after the first message and its sum the time from first to last token. `tokens` == 0 is a
  // no-op.
  void ObserveNextTokens(Seconds gap, size_t tokens);
  // The request ended with `code` (once per request, refused ones included). `prompt_tokens` is
  // the prompt length when known (the worker's usage, or the ids sent), else 0.
  void ObserveFinished(shared::StatusCode code, uint64_t prompt_tokens);
  // A request that ended OK: its phases, each into its histogram (absent ones are not observed).
  void ObserveLatencies(const RequestLatencies& latencies);
  // A request that ended OK after speculative decoding verified `drafted` draft tokens for it,
  // `accepted` of them accepted: its acceptance rate (drafted == 0: nothing is observed).
  void ObserveSpeculation(uint64_t drafted, uint64_t accepted);

  const std::vector<double>& ttft_buckets() const { return ttft_buckets_; }
  const std::vector<double>& itl_buckets() const { return itl_buckets_; }

 private:
  const prometheus::Labels labels_;  // {} or {model}; first: every series below uses it
  const std::vector<double> ttft_buckets_;
  const std::vector<double> itl_buckets_;
  prometheus::Family<prometheus::Counter>& requests_;
  std::vector<prometheus::Counter*> requests_by_code_;  // [StatusCode], made up front
  prometheus::Histogram& ttft_;
  prometheus::Histogram& itl_;
  prometheus::Counter& prompt_tokens_;
  prometheus::Counter& generation_tokens_;
  const std::vector<double> phase_buckets_;
  prometheus::Histogram& e2e_;
  prometheus::Histogram& queue_;
  prometheus::Histogram& prefill_;
  prometheus::Histogram& decode_;
  prometheus::Histogram& acceptance_;
};

// One request as RequestMetrics sees it: turns "k tokens reached the gateway now" into the TTFT
// observation (the first time) or k inter-token gaps (later), and the request's end into its
// status and prompt tokens, once. Owned by the request's relay and used under its lock; not
// thread-safe. A null `metrics` observes nothing.
class RequestTracker {
 public:
  using Clock = std::chrono::steady_clock;

  RequestTracker(RequestMetrics* metrics, Clock::time_point start)
      : metrics_(metrics), start_(start) {}

  void OnTokens(size_t tokens, Clock::time_point now);
  // The first call counts; later ones are ignored (a relay may see a late worker error). `queue`
  // is the time the request waited (the last message's timings.queue_ms) when known; an OK end
  // also observes the request's phases (RequestLatencies) as of `now`.
  void OnFinished(shared::StatusCode code, uint64_t prompt_tokens,
                  std::optional<RequestMetrics::Seconds> queue = std::nullopt,
                  Clock::time_point now = Clock::now());
  // Before an OK OnFinished: the request's speculative drafts (usage.draft_tokens, accepted).
  void OnSpeculation(uint64_t drafted, uint64_t accepted) {
    if (metrics_ != nullptr && !finished_) metrics_->ObserveSpeculation(drafted, accepted);
  }

 private:
  RequestMetrics* const metrics_;
  const Clock::time_point start_;
  std::optional<Clock::time_point> first_tokens_;  // when the first token-bearing message came
  std::optional<Clock::time_point> last_tokens_;   // when the previous token-bearing message came
  bool finished_ = false;
};

}  // namespace smallmind::gateway
