#include "cli/load_bench.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <numeric>
#include <thread>
#include <utility>
#include <vector>

#include <spdlog/fmt/fmt.h>
#include <nlohmann/json.hpp>

#include "cli/client.h"
#include "smallmind/v1/inference.grpc.pb.h"
#include "smallmind/v1/worker.grpc.pb.h"

namespace smallmind::cli {
namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

class GatewayStream final : public ResponseStream {
 public:
  explicit GatewayStream(
      std::unique_ptr<grpc::ClientReader<smallmind::v1::GenerateResponse>> reader)
      : reader_(std::move(reader)) {}
  bool Read(smallmind::v1::GenerateResponse* message) override { return reader_->Read(message); }
  grpc::Status Finish() override { return reader_->Finish(); }

 private:
  std::unique_ptr<grpc::ClientReader<smallmind::v1::GenerateResponse>> reader_;
};

class GatewayStreamOpener final : public StreamOpener {
 public:
  explicit GatewayStreamOpener(std::shared_ptr<grpc::Channel> channel)
      : stub_(smallmind::v1::Inference::NewStub(std::move(channel))) {}
  std::unique_ptr<ResponseStream> Open(grpc::ClientContext* context,
                                       const smallmind::v1::GenerateRequest& request) override {
    return std::make_unique<GatewayStream>(stub_->Generate(context, request));
  }

 private:
  std::unique_ptr<smallmind::v1::Inference::Stub> stub_;
};

class WorkerStream final : public ResponseStream {
 public:
  explicit WorkerStream(std::unique_ptr<grpc::ClientReader<smallmind::v1::SubmitResponse>> reader)
      : reader_(std::move(reader)) {}
  bool Read(smallmind::v1::GenerateResponse* message) override {
    if (!reader_->Read(&response_)) return false;
    message->Swap(response_.mutable_response());
    return true;
  }
  grpc::Status Finish() override { return reader_->Finish(); }

 private:
  std::unique_ptr<grpc::ClientReader<smallmind::v1::SubmitResponse>> reader_;
  smallmind::v1::SubmitResponse response_;
};

class WorkerStreamOpener final : public StreamOpener {
 public:
  explicit WorkerStreamOpener(std::shared_ptr<grpc::Channel> channel)
      : stub_(smallmind::v1::Worker::NewStub(std::move(channel))) {}
  std::unique_ptr<ResponseStream> Open(grpc::ClientContext* context,
                                       const smallmind::v1::GenerateRequest& request) override {
    smallmind::v1::SubmitRequest submit;
    *submit.mutable_request() = request;
    if (request.request_id().empty()) {
      submit.mutable_request()->set_request_id(fmt::format("bench-{}", next_id_++));
    }
    return std::make_unique<WorkerStream>(stub_->Submit(context, submit));
  }

 private:
  std::unique_ptr<smallmind::v1::Worker::Stub> stub_;
  std::atomic<uint64_t> next_id_{1};
};

// What one client thread measured.
struct ClientTally {
  LoadBenchReport counts;  // started, outcomes, tokens; latencies below
  std::vector<double> ttft_ms;
  std::vector<double> itl_ms;
  Clock::time_point last_end{};
};

void RunOne(StreamOpener& opener, const PlannedRequest& planned, const std::string& api_key,
            ClientTally& tally) {
  grpc::ClientContext context;
  if (!api_key.empty()) context.AddMetadata("authorization", "Bearer " + api_key);
  const Clock::time_point start = Clock::now();
  std::unique_ptr<ResponseStream> stream = opener.Open(&context, planned.request);
  smallmind::v1::GenerateResponse message;
  Clock::time_point previous{};
  uint64_t tokens = 0;
  smallmind::v1::Usage usage;
  bool cancelled = false;
  while (stream->Read(&message)) {
    if (message.has_usage()) usage = message.usage();
    const int n = message.token_ids_size();
    if (n == 0) continue;
    const Clock::time_point now = Clock::now();
    if (tokens == 0) {
      tally.ttft_ms.push_back(Ms(now - start));
    } else {
      tally.itl_ms.insert(tally.itl_ms.end(), static_cast<size_t>(n), Ms(now - previous) / n);
    }
    previous = now;
    tokens += static_cast<uint64_t>(n);
    if (!cancelled && planned.cancel_after_tokens > 0 && tokens >= planned.cancel_after_tokens) {
      context.TryCancel();
      cancelled = true;
    }
  }
  const grpc::Status status = stream->Finish();
  tally.last_end = std::max(tally.last_end, Clock::now());
  LoadBenchReport& c = tally.counts;
  c.completion_tokens += tokens;
  if (status.ok()) {
    ++c.ok;
    c.prompt_tokens += usage.prompt_tokens();
    c.cached_prompt_tokens += usage.cached_prompt_tokens();
    c.draft_tokens += usage.draft_tokens();
    c.accepted_draft_tokens += usage.accepted_draft_tokens();
  } else if (cancelled && status.error_code() == grpc::StatusCode::CANCELLED) {
    ++c.cancelled;
  } else {
    const std::string code = GrpcCodeName(status.error_code());
    ++c.errors_by_status[code];
    if (c.errors++ == 0) c.first_error = DescribeRpcError(status);
  }
}

void Merge(ClientTally& tally, LoadBenchReport& report, std::vector<double>& ttft,
           std::vector<double>& itl) {
  const LoadBenchReport& c = tally.counts;
  report.started += c.started;
  report.ok += c.ok;
  report.cancelled += c.cancelled;
  if (report.errors == 0 && c.errors > 0) report.first_error = c.first_error;
  report.errors += c.errors;
  for (const auto& [code, n] : c.errors_by_status) report.errors_by_status[code] += n;
  report.prompt_tokens += c.prompt_tokens;
  report.cached_prompt_tokens += c.cached_prompt_tokens;
  report.completion_tokens += c.completion_tokens;
  report.draft_tokens += c.draft_tokens;
  report.accepted_draft_tokens += c.accepted_draft_tokens;
  ttft.insert(ttft.end(), tally.ttft_ms.begin(), tally.ttft_ms.end());
  itl.insert(itl.end(), tally.itl_ms.begin(), tally.itl_ms.end());
}

nlohmann::ordered_json SummaryJson(const LatencySummary& s) {
  return {{"count", s.count}, {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}, {"mean", s.mean}};
}

std::string Bound(const LoadBenchOptions& o) {
  std::string out;
  if (o.requests > 0) out = fmt::format("{} requests", o.requests);
  if (o.duration.count() > 0) {
    out += fmt::format("{}{:g} s", out.empty() ? "" : " or ", o.duration.count());
  }
  return out;
}

}  // namespace

std::unique_ptr<StreamOpener> GatewayOpener(std::shared_ptr<grpc::Channel> channel) {
  return std::make_unique<GatewayStreamOpener>(std::move(channel));
}

std::unique_ptr<StreamOpener> WorkerOpener(std::shared_ptr<grpc::Channel> channel) {
  return std::make_unique<WorkerStreamOpener>(std::move(channel));
}

LatencySummary Summarize(std::vector<double>& values_ms) {
  LatencySummary s;
  s.count = values_ms.size();
  if (values_ms.empty()) return s;
  const auto at = [&](double p) {
    const auto k = static_cast<size_t>(p * static_cast<double>(values_ms.size() - 1) + 0.5);
    std::nth_element(values_ms.begin(), values_ms.begin() + static_cast<ptrdiff_t>(k),
                     values_ms.end());
    return values_ms[k];
  };
  s.p50 = at(0.50);
  s.p90 = at(0.90);
  s.p99 = at(0.99);
  s.mean = std::accumulate(values_ms.begin(), values_ms.end(), 0.0) / values_ms.size();
  return s;
}

double PrefixCacheHitRate(const LoadBenchReport& report) {
  if (report.prompt_tokens == 0) return 0;
  return static_cast<double>(report.cached_prompt_tokens) / report.prompt_tokens;
}

LoadBenchReport RunLoadBench(StreamOpener& opener, const LoadPlan& plan,
                             const LoadBenchOptions& options) {
  std::vector<ClientTally> tallies(static_cast<size_t>(options.concurrency));  // [client]
  std::atomic<uint64_t> next{0};
  std::atomic<uint64_t> ended{0};
  const Clock::time_point start = Clock::now();
  const bool timed = options.duration.count() > 0;
  const Clock::time_point stop_starting =
      start + std::chrono::duration_cast<Clock::duration>(options.duration);
  std::vector<std::thread> clients;
  for (ClientTally& tally : tallies) {
    clients.emplace_back([&] {
      while (true) {
        if (timed && Clock::now() >= stop_starting) break;
        const uint64_t index = next++;
        if (options.requests > 0 && index >= options.requests) break;
        ++tally.counts.started;
        RunOne(opener, plan.Request(index), options.api_key, tally);
        const uint64_t now_ended = ++ended;
        if (options.progress) options.progress(now_ended, options.requests);
      }
    });
  }
  for (std::thread& client : clients) client.join();

  LoadBenchReport report;
  std::vector<double> ttft, itl;
  Clock::time_point end = start;
  for (ClientTally& tally : tallies) {
    Merge(tally, report, ttft, itl);
    end = std::max(end, tally.last_end);
  }
  report.wall_s = std::chrono::duration<double>(end - start).count();
  if (report.wall_s > 0) {
    report.tokens_per_s = report.completion_tokens / report.wall_s;
    report.requests_per_s = (report.ok + report.cancelled + report.errors) / report.wall_s;
  }
  report.ttft_ms = Summarize(ttft);
  report.itl_ms = Summarize(itl);
  return report;
}

std::string FormatLoadBenchReport(const std::string& target, const LoadBenchOptions& o,
                                  const LoadBenchReport& r) {
  std::string out = fmt::format(
      "requests: {} ok, {} cancelled, {} errors of {} started ({}, concurrency {}, {})\n", r.ok,
      r.cancelled, r.errors, r.started, target, o.concurrency, Bound(o));
  if (r.errors > 0) {
    out += "errors by status:";
    for (const auto& [code, n] : r.errors_by_status) out += fmt::format(" {} {}", code, n);
    out += fmt::format("\nfirst error: {}\n", r.first_error);
  }
  out += fmt::format(
      "wall: {:.2f} s, prompt tokens: {} (completed requests), completion tokens: {}\n"
      "prefix cache: {:.1f}% of prompt tokens cached ({} of {})\n"
      "throughput: {:.1f} tok/s, {:.2f} requests/s\n",
      r.wall_s, r.prompt_tokens, r.completion_tokens, 100 * PrefixCacheHitRate(r),
      r.cached_prompt_tokens, r.prompt_tokens, r.tokens_per_s, r.requests_per_s);
  if (r.draft_tokens > 0) {
    out += fmt::format(
        "speculation: {} of {} draft tokens accepted ({:.1f}%)\n", r.accepted_draft_tokens,
        r.draft_tokens,
        100.0 * static_cast<double>(r.accepted_draft_tokens) / static_cast<double>(r.draft_tokens));
  }
  out += fmt::format("ttft ms: p50 {:.2f}  p90 {:.2f}  p99 {:.2f}  mean {:.2f}  (n {})\n",
                     r.ttft_ms.p50, r.ttft_ms.p90, r.ttft_ms.p99, r.ttft_ms.mean, r.ttft_ms.count);
  out += fmt::format(
      "itl ms:  p50 {:.3f}  p90 {:.3f}  p99 {:.3f}  (n {}; a k-token message is k gaps)\n",
      r.itl_ms.p50, r.itl_ms.p90, r.itl_ms.p99, r.itl_ms.count);
  return out;
}

std::string LoadBenchReportJson(const std::string& target, const LoadBenchOptions& o,
                                const LoadBenchReport& r) {
  nlohmann::ordered_json errors_by_status = nlohmann::ordered_json::object();
  for (const auto& [code, n] : r.errors_by_status) errors_by_status[code] = n;
  const nlohmann::ordered_json json = {
      {"target", target},
      {"concurrency", o.concurrency},
      {"requests_bound", o.requests},
      {"duration_s", o.duration.count()},
      {"started", r.started},
      {"ok", r.ok},
      {"cancelled", r.cancelled},
      {"errors", r.errors},
      {"errors_by_status", errors_by_status},
      {"first_error", r.first_error},
      {"wall_s", r.wall_s},
      {"prompt_tokens", r.prompt_tokens},
      {"cached_prompt_tokens", r.cached_prompt_tokens},
      {"prefix_cache_hit_rate", PrefixCacheHitRate(r)},
      {"completion_tokens", r.completion_tokens},
      {"draft_tokens", r.draft_tokens},
      {"accepted_draft_tokens", r.accepted_draft_tokens},
      {"tokens_per_s", r.tokens_per_s},
      {"requests_per_s", r.requests_per_s},
      {"ttft_ms", SummaryJson(r.ttft_ms)},
      {"itl_ms", SummaryJson(r.itl_ms)},
  };
  return json.dump(2) + "\n";
}

}  // namespace smallmind::cli
