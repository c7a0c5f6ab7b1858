#include "cli/bench_command.h"

#include <cstdio>
#include <utility>

#include <spdlog/fmt/fmt.h>

namespace smallmind::cli {
namespace {

shared::Status CheckRange(std::string_view flag, double value, double lo, double hi) {
  if (value >= lo && value <= hi) return shared::Status::Ok();
  return shared::InvalidArgument(
      fmt::format("{} must be in [{}, {}], got {}", flag, lo, hi, value));
}

}  // namespace

BenchCommand::BenchCommand(CLI::App& parent)
    : Command(parent, "bench",
              "load-test a server with concurrent Generate streams, or with --offline measure "
              "the engine in-process (pp128 / tg64)") {
  CLI::App& a = app();
  CLI::Option* offline =
      a.add_flag("--offline", offline_, "measure the engine in this process, without a server");
  prompt_.AddFlags(a, "prompt", "the prompt every request sends");
  std::vector<CLI::Option*> online = sampling_.AddFlags(a);
  online.push_back(a.add_option("--concurrency", load_.concurrency, "streams open at a time"));
  online.push_back(a.add_option("--requests", load_.requests, "requests in all"));
  online.push_back(
      a.add_option("--max-seconds", load_.max_seconds, "no new request starts after this long"));
  for (CLI::Option* option : online) option->excludes(offline);
  a.add_option("--model", engine_.model, "model to load (anything smallmind-worker --model takes)")
      ->type_name("SPEC")
      ->needs(offline);
  a.add_option("--tokenizer", engine_.tokenizer, "tokenizer.bin of a llama2.c checkpoint")
      ->type_name("PATH")
      ->default_str("found beside the model")
      ->needs(offline);
  a.add_option("--threads", engine_.threads, "thread counts to measure, comma-separated")
      ->delimiter(',')
      ->needs(offline);
  a.add_option("--paths", paths_, "kernel paths to measure: par, det or par,det")
      ->delimiter(',')
      ->check(CLI::IsMember({"par", "det"}))
      ->needs(offline);
  a.add_option("--repetitions", engine_.repetitions, "runs per row; the best one is shown")
      ->needs(offline);
  a.add_flag("--no-recompute", no_recompute_, "skip the KV cache vs recompute comparison")
      ->needs(offline);
  AddClientFlags(a, client_);
}

shared::Status BenchCommand::Validate() const {
  if (offline_) {
    if (prompt_.given()) {
      return shared::InvalidArgument(
          "--offline runs fixed token sequences (pp128, tg64) and takes no prompt");
    }
    for (int threads : engine_.threads)
      SM_RETURN_IF_ERROR(CheckRange("--threads", threads, 1, 256));
    return CheckRange("--repetitions", engine_.repetitions, 1, 100);
  }
  SM_RETURN_IF_ERROR(prompt_.Validate());
  SM_RETURN_IF_ERROR(CheckRange("--concurrency", load_.concurrency, 1, 1024));
  SM_RETURN_IF_ERROR(CheckRange("--requests", load_.requests, 1, 1e6));
  return CheckRange("--max-seconds", load_.max_seconds, 0.001, 1e6);
}

shared::Result<int> BenchCommand::Run() const { return offline_ ? RunOffline() : RunLoad(); }

// Prints throughput, TTFT and inter-token latency percentiles.
shared::Result<int> BenchCommand::RunLoad() const {
  LoadBenchOptions options = load_;
  SM_ASSIGN_OR_RETURN(std::string prompt, prompt_.Read());
  options.request = sampling_.BuildRequest(std::move(prompt));
  options.api_key = client_.api_key;
  SM_ASSIGN_OR_RETURN(Client client, Client::Connect(client_));
  const LoadBenchReport report = RunLoadBench(client.stub(), options);
  std::fputs(FormatLoadBenchReport(options, report).c_str(), stdout);
  return report.failed == 0 ? 0 : 1;
}

shared::Result<int> BenchCommand::RunOffline() const {
  OfflineBenchOptions options = engine_;
  options.modes.clear();
  for (const std::string& path : paths_) {
    options.modes.push_back(path == "par" ? kernels::ExecMode::kParallel
                                          : kernels::ExecMode::kDeterministic);
  }
  options.recompute = !no_recompute_;
  SM_RETURN_IF_ERROR(RunOfflineBench(options));
  return 0;
}

}  // namespace smallmind::cli
