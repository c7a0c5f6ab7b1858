#include "gateway/metrics/request_metrics.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include <spdlog/fmt/fmt.h>

#include "shared/check.h"

namespace smallmind::gateway {
namespace {

// DESIGN §6 ranges: TTFT resolves 1 ms to 60 s, inter-token latency 0.1 ms to 5 s.
constexpr double kTtftLo = 0.001, kTtftHi = 60;
constexpr double kItlLo = 0.0001, kItlHi = 5;
// A request's phases: 1 ms (a queue-free short answer) to 20 min (a long generation).
constexpr double kPhaseLo = 0.001, kPhaseHi = 1200;
constexpr int kLastCode = static_cast<int>(shared::StatusCode::kUnimplemented);

prometheus::Histogram& PhaseHistogram(prometheus::Registry& registry, const std::string& name,
                                      const std::string& help, const prometheus::Labels& labels,
                                      const std::vector<double>& buckets) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(registry).Add(labels, buckets);
}

// One series per status code, made up front so that rates and ratios see zeros, not gaps.
std::vector<prometheus::Counter*> CodeCounters(prometheus::Family<prometheus::Counter>& family,
                                               const prometheus::Labels& labels) {
  std::vector<prometheus::Counter*> counters;  // [StatusCode]
  for (int code = 0; code <= kLastCode; ++code) {
    prometheus::Labels with_code = labels;
    with_code["status"] = shared::StatusCodeName(static_cast<shared::StatusCode>(code));
    counters.push_back(&family.Add(with_code));
  }
  return counters;
}

}  // namespace

std::vector<double> LatencyBuckets(double lo, double hi) {
  SM_CHECK(lo > 0 && hi > lo) << "bucket range must be positive and increasing";
  static constexpr const char* kMantissas[] = {"1", "1.5", "2", "3", "5", "7.5"};
  std::vector<double> bounds;
  // Parsed from text so that 1.5e-3 is the double nearest 0.0015 and prints as such.
  for (int exponent = -9; exponent <= 9; ++exponent) {
    for (const char* mantissa : kMantissas) {
      const double bound = std::strtod(fmt::format("{}e{}", mantissa, exponent).c_str(), nullptr);
      if (bound >= lo * (1 - 1e-9) && bound < hi * (1 - 1e-9)) bounds.push_back(bound);
    }
  }
  bounds.push_back(hi);
  return bounds;
}

RequestMetrics::RequestMetrics(prometheus::Registry& registry, const std::string& model)
    : labels_(model.empty() ? prometheus::Labels{} : prometheus::Labels{{"model", model}}),
      ttft_buckets_(LatencyBuckets(kTtftLo, kTtftHi)),
      itl_buckets_(LatencyBuckets(kItlLo, kItlHi)),
      requests_(prometheus::BuildCounter()
                    .Name("smallmind_requests_total")
                    .Help("Generate requests finished, by gRPC status code (gRPC and HTTP doors)")
                    .Register(registry)),
      ttft_(
          prometheus::BuildHistogram()
              .Name("smallmind_time_to_first_token_seconds")
              .Help("From the gateway accepting a request to its first token reaching the gateway")
              .Register(registry)
              .Add(labels_, ttft_buckets_)),
      itl_(prometheus::BuildHistogram()
               .Name("smallmind_inter_token_latency_seconds")
               .Help("Gap between tokens as the gateway relays them; a message of k tokens counts "
                     "as k gaps of 1/k of the time since the previous message")
               .Register(registry)
               .Add(labels_, itl_buckets_)),
      prompt_tokens_(prometheus::BuildCounter()
                         .Name("smallmind_prompt_tokens_total")
                         .Help("Prompt tokens of finished requests (as the worker counted them)")
                         .Register(registry)
                         .Add(labels_)),
      generation_tokens_(
          prometheus::BuildCounter()
              .Name("smallmind_generation_tokens_total")
              .Help("Tokens the gateway received from workers for its requests, cancelled "
                    "streams' included")
              .Register(registry)
              .Add(labels_)),
      phase_buckets_(LatencyBuckets(kPhaseLo, kPhaseHi)),
      e2e_(PhaseHistogram(registry, "smallmind_e2e_request_latency_seconds",
                          "From the gateway accepting a request to its last message (OK ones)",
                          labels_, phase_buckets_)),
      queue_(PhaseHistogram(registry, "smallmind_request_queue_time_seconds",
                            "Time a request waited in the gateway's and the worker's queues "
                            "(timings.queue_ms of OK requests)",
                            labels_, phase_buckets_)),
      prefill_(PhaseHistogram(registry, "smallmind_request_prefill_time_seconds",
                              "From the end of a request's queue wait to its first token reaching "
                              "the gateway (OK requests)",
                              labels_, phase_buckets_)),
      decode_(PhaseHistogram(registry, "smallmind_request_decode_time_seconds",
                             "From a request's first token to its last reaching the gateway (OK "
                             "requests)",
                             labels_, phase_buckets_)),
      acceptance_(prometheus::BuildHistogram()
                      .Name("smallmind_spec_acceptance_rate")
                      .Help("Speculative decoding: accepted / drafted tokens of each OK request "
                            "that had drafts verified")
                      .Register(registry)
                      .Add(labels_, prometheus::Histogram::BucketBoundaries{
                                        0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0})) {
  requests_by_code_ = CodeCounters(requests_, labels_);
}

void RequestMetrics::ObserveFirstTokens(Seconds ttft, size_t tokens) {
  ttft_.Observe(ttft.count());
  generation_tokens_.Increment(static_cast<double>(tokens));
}

void RequestMetrics::ObserveNextTokens(Seconds gap, size_t tokens) {
  if (tokens == 0) return;
  generation_tokens_.Increment(static_cast<double>(tokens));
  if (tokens == 1) return itl_.Observe(gap.count());
  // k equal observations land in one bucket: the first bound >= the value, as Observe picks it.
  const double each = gap.count() / static_cast<double>(tokens);
  const size_t bucket = static_cast<size_t>(
      std::lower_bound(itl_buckets_.begin(), itl_buckets_.end(), each) - itl_buckets_.begin());
  std::vector<double> increments(itl_buckets_.size() + 1, 0.0);  // [buckets + the +Inf one]
  increments[bucket] = static_cast<double>(tokens);
  itl_.ObserveMultiple(increments, gap.count());
}

void RequestMetrics::ObserveFinished(shared::StatusCode code, uint64_t prompt_tokens) {
  const int index = static_cast<int>(code);
  SM_CHECK(index >= 0 && index <= kLastCode) << "unknown status code " << index;
  requests_by_code_[static_cast<size_t>(index)]->Increment();
  prompt_tokens_.Increment(static_cast<double>(prompt_tokens));
}

void RequestMetrics::ObserveLatencies(const RequestLatencies& latencies) {
  e2e_.Observe(latencies.e2e.count());
  if (latencies.queue) queue_.Observe(latencies.queue->count());
  if (latencies.prefill) prefill_.Observe(latencies.prefill->count());
  if (latencies.decode) decode_.Observe(latencies.decode->count());
}

void RequestTracker::OnTokens(size_t tokens, Clock::time_point now) {
  if (metrics_ == nullptr || tokens == 0) return;
  if (last_tokens_) {
    metrics_->ObserveNextTokens(now - *last_tokens_, tokens);
  } else {
    metrics_->ObserveFirstTokens(now - start_, tokens);
    first_tokens_ = now;
  }
  last_tokens_ = now;
}

void RequestMetrics::ObserveSpeculation(uint64_t drafted, uint64_t accepted) {
  if (drafted == 0) return;
  acceptance_.Observe(static_cast<double>(accepted) / static_cast<double>(drafted));
}

void RequestTracker::OnFinished(shared::StatusCode code, uint64_t prompt_tokens,
                                std::optional<RequestMetrics::Seconds> queue,
                                Clock::time_point now) {
  if (metrics_ == nullptr || finished_) return;
  finished_ = true;
  metrics_->ObserveFinished(code, prompt_tokens);
  if (code != shared::StatusCode::kOk) return;
  RequestLatencies latencies;
  latencies.e2e = now - start_;
  latencies.queue = queue;
  if (first_tokens_) {
    const RequestMetrics::Seconds to_first = *first_tokens_ - start_;
    // The queue as the worker measured it may exceed the gateway's own span by clock jitter.
    latencies.prefill =
        std::max(to_first - queue.value_or(RequestMetrics::Seconds(0)), RequestMetrics::Seconds(0));
    latencies.decode = *last_tokens_ - *first_tokens_;
  }
  metrics_->ObserveLatencies(latencies);
}

}  // namespace smallmind::gateway
