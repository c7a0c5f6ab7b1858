#include "cli/load_bench.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

namespace smallmind::cli {
namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Percentile(std::vector<double>* v, double p) {
  if (v->empty()) return 0;
  size_t k = static_cast<size_t>(p * static_cast<double>(v->size() - 1) + 0.5);
  std::nth_element(v->begin(), v->begin() + static_cast<long>(k), v->end());
  return (*v)[k];
}

// What one stream measured.
struct StreamResult {
  grpc::Status status;
  double ttft_ms = 0;
  std::vector<double> itl_ms;  // one entry per token after the first
  uint64_t tokens = 0;
  double decode_s = 0;
};

StreamResult RunOne(smallmind::v1::Inference::Stub& stub, const LoadBenchOptions& options,
                    int index) {
  StreamResult r;
  smallmind::v1::GenerateRequest request = options.request;
  if (request.sampling().has_seed()) {
    request.mutable_sampling()->set_seed(request.sampling().seed() + static_cast<uint64_t>(index));
  }
  grpc::ClientContext context;
  if (!options.api_key.empty()) context.AddMetadata("authorization", "Bearer " + options.api_key);
  const Clock::time_point start = Clock::now();
  Clock::time_point first{}, previous{};
  auto reader = stub.Generate(&context, request);
  smallmind::v1::GenerateResponse message;
  while (reader->Read(&message)) {
    const int n = message.token_ids_size();
    if (n == 0) continue;
    const Clock::time_point now = Clock::now();
    if (r.tokens == 0) {
      first = now;
      r.ttft_ms = Ms(now - start);
    } else {
      // Tokens that arrive together share the gap since the previous message.
      for (int i = 0; i < n; ++i) r.itl_ms.push_back(Ms(now - previous) / n);
    }
    previous = now;
    r.tokens += static_cast<uint64_t>(n);
  }
  r.status = reader->Finish();
  if (r.tokens > 1) r.decode_s = std::chrono::duration<double>(previous - first).count();
  return r;
}

}  // namespace

LoadBenchReport RunLoadBench(smallmind::v1::Inference::Stub& stub,
                             const LoadBenchOptions& options) {
  std::mutex mu;
  std::vector<StreamResult> results;
  std::atomic<int> next{0};
  const Clock::time_point start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(options.max_seconds));
  std::vector<std::thread> threads;
  for (int t = 0; t < options.concurrency; ++t) {
    threads.emplace_back([&] {
      for (int i = next++; i < options.requests && Clock::now() < deadline; i = next++) {
        StreamResult r = RunOne(stub, options, i);
        std::lock_guard<std::mutex> lock(mu);
        results.push_back(std::move(r));
      }
    });
  }
  for (auto& t : threads) t.join();

  LoadBenchReport report;
  report.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<double> ttft, itl;
  double stream_rates = 0;
  for (const StreamResult& r : results) {
    if (!r.status.ok()) {
      if (report.failed++ == 0) report.first_error = r.status.error_message();
      continue;
    }
    ++report.ok;
    report.completion_tokens += r.tokens;
    ttft.push_back(r.ttft_ms);
    itl.insert(itl.end(), r.itl_ms.begin(), r.itl_ms.end());
    if (r.decode_s > 0) stream_rates += static_cast<double>(r.tokens - 1) / r.decode_s;
  }
  if (report.wall_s > 0) report.tokens_per_s = report.completion_tokens / report.wall_s;
  if (report.ok > 0) report.mean_stream_tok_s = stream_rates / report.ok;
  report.ttft_ms_p50 = Percentile(&ttft, 0.50);
  report.ttft_ms_p90 = Percentile(&ttft, 0.90);
  report.ttft_ms_p99 = Percentile(&ttft, 0.99);
  report.itl_ms_p50 = Percentile(&itl, 0.50);
  report.itl_ms_p90 = Percentile(&itl, 0.90);
  report.itl_ms_p99 = Percentile(&itl, 0.99);
  return report;
}

std::string FormatLoadBenchReport(const LoadBenchOptions& o, const LoadBenchReport& r) {
  char buf[1024];
  std::snprintf(buf, sizeof(buf),
                "requests: %d ok, %d failed (concurrency %d, max_new_tokens %u)\n"
                "wall: %.2f s, completion tokens: %llu\n"
                "throughput: %.1f tok/s aggregate, %.1f tok/s mean per stream\n"
                "ttft ms: p50 %.2f  p90 %.2f  p99 %.2f\n"
                "itl ms:  p50 %.3f  p90 %.3f  p99 %.3f\n",
                r.ok, r.failed, o.concurrency, o.request.stopping().max_new_tokens(), r.wall_s,
                static_cast<unsigned long long>(r.completion_tokens), r.tokens_per_s,
                r.mean_stream_tok_s, r.ttft_ms_p50, r.ttft_ms_p90, r.ttft_ms_p99, r.itl_ms_p50,
                r.itl_ms_p90, r.itl_ms_p99);
  std::string out = buf;
  if (r.failed > 0) out += "first error: " + r.first_error + "\n";
  return out;
}

}  // namespace smallmind::cli
