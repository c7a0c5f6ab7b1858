// RunLoadBench: the `smallmind bench` load generator. `concurrency` clients each run one Generate
// stream at a time, requests planned by a LoadPlan, until `requests` have started or `duration`
// has passed (requests in flight then run to their end), against a gateway (Inference.Generate) or
// a worker directly (Worker.Submit, the same stream without the gateway hop). It summarises
// outcomes by status code, throughput, TTFT, inter-token latency and the prefix-cache hit rate.
// Thread-safe to call.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "cli/load_plan.h"
#include "smallmind/v1/inference.pb.h"

namespace smallmind::cli {

// One Generate stream as the bench reads it, whichever service serves it.
class ResponseStream {
 public:
  virtual ~ResponseStream() = default;
  // The next message; false at the end of the stream.
  virtual bool Read(smallmind::v1::GenerateResponse* message) = 0;
  virtual grpc::Status Finish() = 0;
};

// Opens a stream for `request` on `context` (which outlives the stream). Thread-safe.
class StreamOpener {
 public:
  virtual ~StreamOpener() = default;
  virtual std::unique_ptr<ResponseStream> Open(grpc::ClientContext* context,
                                               const smallmind::v1::GenerateRequest& request) = 0;
};

// Inference.Generate on a gateway, or Worker.Submit on a worker (the request gets an id the way
// the gateway would give it one).
std::unique_ptr<StreamOpener> GatewayOpener(std::shared_ptr<grpc::Channel> channel);
std::unique_ptr<StreamOpener> WorkerOpener(std::shared_ptr<grpc::Channel> channel);

struct LoadBenchOptions {
  int concurrency = 8;
  // Requests to start in all; 0 = no bound (then `duration` bounds the run).
  uint64_t requests = 64;
  // No request starts after this long; 0 = no bound (then `requests` bounds the run).
  std::chrono::duration<double> duration{0};
  std::string api_key;  // sent as `authorization: Bearer <key>` when set
  // Called from the client threads (must be thread-safe) each time a request ends: requests ended
  // so far, and `requests` (0 = bounded by `duration`). Unset = nothing.
  std::function<void(uint64_t ended, uint64_t planned)> progress;
};

struct LatencySummary {
  uint64_t count = 0;
  double p50 = 0, p90 = 0, p99 = 0, mean = 0;  // milliseconds
};

struct LoadBenchReport {
  uint64_t started = 0;
  uint64_t ok = 0;         // ended OK (finish reason: length, stop, end of text)
  uint64_t cancelled = 0;  // cancelled by the bench as planned (not errors)
  uint64_t errors = 0;     // everything else
  std::map<std::string, uint64_t> errors_by_status;  // status code name -> count
  std::string first_error;                           // "CODE: message" of the first error
  double wall_s = 0;                                 // from the first start to the last end
  uint64_t prompt_tokens = 0;                        // from the usage of requests that completed
  // Of those, the ones a worker's prefix cache served (usage.cached_prompt_tokens).
  uint64_t cached_prompt_tokens = 0;
  uint64_t completion_tokens = 0;  // every token received, cancelled streams' included
  // Speculative decoding, from the usage of requests that completed: draft tokens the workers
  // verified and how many of them they accepted.
  uint64_t draft_tokens = 0;
  uint64_t accepted_draft_tokens = 0;
  double tokens_per_s = 0;    // completion_tokens / wall_s, all streams together
  double requests_per_s = 0;  // ended requests / wall_s
  // Time to first token of every stream that got one. Inter-token latency: a message carrying k
  // tokens counts as k gaps of 1/k of the time since the previous message (tokens come in groups
  // when the server batches writes), so the count is every token after the first message and the
  // sum the time from the first message to the last.
  LatencySummary ttft_ms, itl_ms;
};

LoadBenchReport RunLoadBench(StreamOpener& opener, const LoadPlan& plan,
                             const LoadBenchOptions& options);

// Multi-line human-readable summary; `target` says what was measured ("gateway HOST:PORT").
std::string FormatLoadBenchReport(const std::string& target, const LoadBenchOptions& options,
                                  const LoadBenchReport& report);
// The same as one JSON object (`smallmind bench --json`), keys as in LoadBenchReport.
std::string LoadBenchReportJson(const std::string& target, const LoadBenchOptions& options,
                                const LoadBenchReport& report);

// The percentiles of `values_ms` (nearest rank); reorders the vector.
LatencySummary Summarize(std::vector<double>& values_ms);

// cached_prompt_tokens / prompt_tokens; 0 when no prompt token was counted.
double PrefixCacheHitRate(const LoadBenchReport& report);

}  // namespace smallmind::cli
