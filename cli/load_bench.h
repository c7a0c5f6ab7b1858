// RunLoadBench: the `smallmind bench` load generator. Opens `concurrency` streams at a time against
// a gateway (or worker-compatible Inference server) until `requests` have finished or the time
// bound passes, and summarises throughput, TTFT and inter-token latency. Thread-safe to call.
#pragma once

#include <cstdint>
#include <string>

#include "smallmind/v1/inference.grpc.pb.h"

namespace smallmind::cli {

struct LoadBenchOptions {
  int concurrency = 8;
  int requests = 64;
  double max_seconds = 300;  // bound on the whole run; unfinished requests are not started
  smallmind::v1::GenerateRequest request;  // sent as is, with a per-request seed offset
  std::string api_key;
};

struct LoadBenchReport {
  int ok = 0;
  int failed = 0;
  std::string first_error;
  double wall_s = 0;
  uint64_t completion_tokens = 0;
  double tokens_per_s = 0;       // completion tokens / wall time, all streams together
  double mean_stream_tok_s = 0;  // mean over requests of their own decode rate
  double ttft_ms_p50 = 0, ttft_ms_p90 = 0, ttft_ms_p99 = 0;
  double itl_ms_p50 = 0, itl_ms_p90 = 0, itl_ms_p99 = 0;
};

LoadBenchReport RunLoadBench(smallmind::v1::Inference::Stub& stub, const LoadBenchOptions& options);

// Multi-line human-readable summary.
std::string FormatLoadBenchReport(const LoadBenchOptions& options, const LoadBenchReport& report);

}  // namespace smallmind::cli
