#include "cli/bench_command.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include <spdlog/fmt/fmt.h>

#include "smallmind/v1/worker.grpc.pb.h"

namespace smallmind::cli {
namespace {

shared::Status CheckRange(std::string_view flag, double value, double lo, double hi) {
  if (value >= lo && value <= hi) return shared::Status::Ok();
  return shared::InvalidArgument(
      fmt::format("{} must be in [{}, {}], got {}", flag, lo, hi, value));
}

// Whether a prompt argument reads as a server address (unix:PATH or HOST:PORT), the value a
// user meant for --addr.
bool LooksLikeAddress(std::string_view text) {
  if (text.starts_with("unix:")) return true;
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) return false;
  if (text.find(' ') != std::string_view::npos) return false;
  return text.find_first_not_of("0123456789", colon + 1) == std::string_view::npos;
}

// The non-empty lines of `path`: the prompts of --prompt-list.
shared::Result<std::vector<std::string>> ReadPromptList(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return shared::NotFound(fmt::format("--prompt-list: cannot open {}", path));
  std::vector<std::string> prompts;
  size_t bytes = 0;
  for (std::string line; std::getline(in, line);) {
    bytes += line.size() + 1;
    if (bytes > PromptSource::kMaxBytes) {
      return shared::InvalidArgument(fmt::format("--prompt-list: {} is larger than {} MiB", path,
                                                 PromptSource::kMaxBytes >> 20));
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) prompts.push_back(std::move(line));
  }
  if (prompts.empty()) {
    return shared::InvalidArgument(fmt::format("--prompt-list: {} has no prompt", path));
  }
  return prompts;
}

// The served model's facts, from the gateway or the worker.
shared::Result<v1::ModelInfo> ServedModel(const std::shared_ptr<grpc::Channel>& channel,
                                          bool worker, const std::string& api_key) {
  grpc::ClientContext context;
  if (!api_key.empty()) context.AddMetadata("authorization", "Bearer " + api_key);
  v1::ModelInfo info;
  const grpc::Status status =
      worker ? v1::Worker::NewStub(channel)->GetModelInfo(&context, {}, &info)
             : v1::Inference::NewStub(channel)->GetModelInfo(&context, {}, &info);
  if (!status.ok()) {
    return shared::Unavailable(fmt::format("--prompt-tokens: GetModelInfo failed: {}: {}",
                                           GrpcCodeName(status.error_code()),
                                           status.error_message()));
  }
  return info;
}

// Token prompts of up to `longest` ids must leave the model's context room for a new token
// (with the BOS the server puts before them): refused before any request, rather than every long
// one failing with INVALID_ARGUMENT in the middle of the load.
shared::Status CheckPromptsFit(uint64_t longest, bool shared_prefix, const v1::ModelInfo& info) {
  const uint64_t bos = info.add_bos_token() ? 1 : 0;
  if (info.context_length() == 0 || longest + bos < info.context_length()) {
    return shared::Status::Ok();
  }
  return shared::InvalidArgument(fmt::format(
      "{}the longest prompt is {} token ids{} but the served model's context is {}; at most {} "
      "ids leave room for a new token",
      shared_prefix ? "--prefix-tokens + --prompt-tokens: " : "--prompt-tokens: ", longest,
      bos > 0 ? " plus BOS" : "", info.context_length(), info.context_length() - 1 - bos));
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
  for (CLI::Option* option : AddLoadFlags(a)) option->excludes(offline);
  AddOfflineFlags(a, offline);
  AddClientFlags(a, client_);
}

std::vector<CLI::Option*> BenchCommand::AddLoadFlags(CLI::App& a) {
  std::vector<CLI::Option*> online = sampling_.AddFlags(a);
  // bench's --max-tokens takes a range: it replaces the one the sampling flags share.
  std::erase_if(online, [&a](CLI::Option* option) {
    return option->get_name() == "--max-tokens" && a.remove_option(option);
  });
  online.push_back(a.add_option("--max-tokens", max_tokens_,
                                "tokens to generate at most, N or MIN:MAX (uniform per request); "
                                "0 = the server's default")
                       ->type_name("RANGE")
                       ->default_str("0"));
  online.push_back(a.add_option("--prompt-list", prompt_list_,
                                "a file of prompts, one per line; each request sends one at random")
                       ->type_name("PATH"));
  online.push_back(a.add_option("--prompt-tokens", prompt_tokens_,
                                "random token-id prompts of N or MIN:MAX tokens (uniform per "
                                "request) instead of text")
                       ->type_name("RANGE"));
  online.push_back(a.add_option("--shared-prefixes", shared_prefixes_,
                                "token-id prompts start with one of N shared prefixes (request i "
                                "takes prefix i mod N), then --prompt-tokens ids of their own "
                                "(16 unless given); reports the prefix-cache hit rate")
                       ->type_name("N"));
  online.push_back(
      a.add_option("--prefix-tokens", prefix_tokens_, "length of each shared prefix, in token ids")
          ->type_name("T"));
  online.push_back(a.add_option("--concurrency", load_.concurrency, "clients, one stream each"));
  online.push_back(a.add_option("--requests", load_.requests,
                                "requests to start in all; 0 = no bound (with --duration)")
                       ->default_str("64, or 0 with --duration"));
  online.push_back(a.add_option("--duration", duration_,
                                "no request starts after this long (90s, 2m, 1h); the ones in "
                                "flight finish")
                       ->type_name("DURATION")
                       ->default_str("none"));
  online.push_back(a.add_option("--cancel-fraction", cancel_fraction_,
                                "share of requests the client cancels mid-stream (after a "
                                "random number of tokens); not counted as errors"));
  online.push_back(a.add_flag("--worker", worker_,
                              "--addr is a worker: call Worker.Submit directly, without the "
                              "gateway (to measure the gateway's cost)"));
  online.push_back(a.add_flag("--json", json_, "print the report as one JSON object"));
  return online;
}

void BenchCommand::AddOfflineFlags(CLI::App& a, CLI::Option* offline) {
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
  a.add_option_function<std::string>(
       "--kv-dtype",
       [this](const std::string& v) { engine_.kv_type = *kernels::KvTypeFromName(v); },
       "element type of the engine's K/V cache, as smallmind-worker --kv-dtype")
      ->transform(CLI::IsMember({"f16", "q8", "f32"}, CLI::ignore_case))
      ->type_name("TYPE")
      ->default_str("f16")
      ->needs(offline);
}

shared::Status BenchCommand::CheckOnePromptSource() const {
  std::vector<std::string> given;  // as the user wrote them, for the message
  if (!prompt_.file().empty()) given.push_back("--prompt-file " + prompt_.file());
  for (const std::string& arg : prompt_.arguments()) {
    constexpr size_t kShown = 40;  // a long prompt is cut: the message names it, not quotes it
    given.push_back(arg.size() <= kShown
                        ? fmt::format("the prompt '{}'", arg)
                        : fmt::format("the prompt '{}...'", arg.substr(0, kShown)));
  }
  if (!prompt_list_.empty()) given.push_back("--prompt-list " + prompt_list_);
  if (!prompt_tokens_.empty()) given.push_back("--prompt-tokens " + prompt_tokens_);
  if (shared_prefixes_ > 0 && prompt_tokens_.empty()) given.push_back("--shared-prefixes");
  const int sources = (prompt_.given() ? 1 : 0) + (prompt_list_.empty() ? 0 : 1) +
                      (!prompt_tokens_.empty() || shared_prefixes_ > 0 ? 1 : 0);
  if (sources == 1) return shared::Status::Ok();
  std::string message =
      "give exactly one prompt source: a prompt (or --prompt-file), --prompt-list or "
      "--prompt-tokens / --shared-prefixes";
  if (sources == 0) return shared::InvalidArgument(message + "; got none");
  message += "; got ";
  for (size_t i = 0; i < given.size(); i++) message += (i > 0 ? ", " : "") + given[i];
  // `--worker ADDR` reads ADDR as the prompt: the switch takes no value.
  if (worker_ && prompt_.arguments().size() == 1 && LooksLikeAddress(prompt_.arguments()[0])) {
    message += " (--worker is a switch: give the worker's address as --addr)";
  }
  return shared::InvalidArgument(message);
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
  SM_RETURN_IF_ERROR(CheckOnePromptSource());
  SM_RETURN_IF_ERROR(CheckRange("--shared-prefixes", shared_prefixes_, 0, 4096));
  SM_RETURN_IF_ERROR(CheckRange("--prefix-tokens", prefix_tokens_, 1, 1 << 20));
  if (prompt_.given()) SM_RETURN_IF_ERROR(prompt_.Validate());
  if (!prompt_tokens_.empty()) {
    SM_RETURN_IF_ERROR(ParseCountRange("--prompt-tokens", prompt_tokens_, 1, 1 << 20).status());
  }
  if (!max_tokens_.empty()) {
    SM_RETURN_IF_ERROR(ParseCountRange("--max-tokens", max_tokens_, 0, 1 << 20).status());
  }
  if (!duration_.empty()) SM_RETURN_IF_ERROR(ParseDuration("--duration", duration_).status());
  SM_RETURN_IF_ERROR(CheckRange("--concurrency", load_.concurrency, 1, 1024));
  SM_RETURN_IF_ERROR(CheckRange("--requests", static_cast<double>(load_.requests), 0, 1e9));
  if (load_.requests == 0 && duration_.empty()) {
    return shared::InvalidArgument("--requests 0 (no bound) needs --duration");
  }
  return CheckRange("--cancel-fraction", cancel_fraction_, 0, 1);
}

shared::Result<int> BenchCommand::Run() const { return offline_ ? RunOffline() : RunLoad(); }

shared::Result<LoadPlan> BenchCommand::MakePlan(
    const std::shared_ptr<grpc::Channel>& channel) const {
  LoadPlanOptions plan;
  if (prompt_.given()) {
    SM_ASSIGN_OR_RETURN(std::string prompt, prompt_.Read());
    plan.prompts.push_back(std::move(prompt));
  } else if (!prompt_list_.empty()) {
    SM_ASSIGN_OR_RETURN(plan.prompts, ReadPromptList(prompt_list_));
  } else {
    SM_ASSIGN_OR_RETURN(
        plan.prompt_tokens,
        ParseCountRange("--prompt-tokens", prompt_tokens_.empty() ? "16" : prompt_tokens_, 1,
                        1 << 20));
    SM_ASSIGN_OR_RETURN(v1::ModelInfo info, ServedModel(channel, worker_, client_.api_key));
    plan.vocab_size = info.vocab_size();
    plan.shared_prefixes = shared_prefixes_;
    plan.prefix_tokens = prefix_tokens_;
    const uint64_t prefix = shared_prefixes_ > 0 ? prefix_tokens_ : 0;
    SM_RETURN_IF_ERROR(
        CheckPromptsFit(prefix + plan.prompt_tokens.max, shared_prefixes_ > 0, info));
  }
  if (!max_tokens_.empty()) {
    SM_ASSIGN_OR_RETURN(plan.max_tokens, ParseCountRange("--max-tokens", max_tokens_, 0, 1 << 20));
  }
  plan.cancel_fraction = cancel_fraction_;
  plan.seed = sampling_.seed.value_or(1);
  plan.base = sampling_.BuildRequest("");
  plan.base.clear_prompt();
  return LoadPlan::Make(std::move(plan));
}

// Prints outcomes by status, throughput, TTFT and inter-token latency percentiles; exit 1 when any
// request failed (deliberate cancels are not failures).
shared::Result<int> BenchCommand::RunLoad() const {
  LoadBenchOptions options = load_;
  options.api_key = client_.api_key;
  if (!duration_.empty()) {
    SM_ASSIGN_OR_RETURN(options.duration, ParseDuration("--duration", duration_));
    if (subcommand().get_option("--requests")->count() == 0) options.requests = 0;
  }
  SM_ASSIGN_OR_RETURN(Client client, Client::Connect(client_));
  SM_ASSIGN_OR_RETURN(LoadPlan plan, MakePlan(client.channel()));
  const std::unique_ptr<StreamOpener> opener =
      worker_ ? WorkerOpener(client.channel()) : GatewayOpener(client.channel());
  const LoadBenchReport report = RunLoadBench(*opener, plan, options);
  const std::string target = fmt::format("{} {}", worker_ ? "worker" : "gateway", client_.addr);
  const std::string text = json_ ? LoadBenchReportJson(target, options, report)
                                 : FormatLoadBenchReport(target, options, report);
  std::fputs(text.c_str(), stdout);
  return report.errors == 0 ? 0 : 1;
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
