// smallmind: command-line client of the public API (smallmind.v1.Inference).
//   smallmind generate "prompt" [--addr A] [--max-tokens N] [--temperature T] [--seed S] [--top-k
//   K]
//                      [--top-p P] [--deterministic] [--stop STR]... [--ids]
//   smallmind tokenize "text" [--add-bos=false]      smallmind tokenize --decode 1 2 3
//   smallmind info
// Every command takes --addr (default localhost:50051) and --api-key K (or env SMALLMIND_API_KEY).
// A blocking client (the sync API is fine for one call at a time); errors go to stderr, exit 1.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/text_format.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include "cli/load_bench.h"
#include "cli/offline_bench.h"
#include "shared/status.h"
#include "smallmind/v1/inference.grpc.pb.h"

namespace {

using smallmind::shared::InvalidArgument;
using smallmind::shared::Result;
using smallmind::shared::Status;
using smallmind::v1::Inference;

constexpr char kUsage[] =
    "usage:\n"
    "  smallmind generate \"prompt\" [--max-tokens N] [--temperature T] [--seed S] [--top-k K]\n"
    "                     [--top-p P] [--deterministic] [--stop STR]... [--ids]\n"
    "  smallmind tokenize \"text\" [--add-bos=false]\n"
    "  smallmind tokenize --decode ID ID ...\n"
    "  smallmind info\n"
    "  smallmind bench \"prompt\" [--concurrency C] [--requests N] [--max-tokens M]\n"
    "                  [--temperature T] [--seed S] [--deterministic] [--max-seconds S]\n"
    "  smallmind bench --offline [--model SPEC] [--tokenizer PATH] [--threads 1,2]\n"
    "                  [--paths par,det] [--repetitions N] [--no-recompute]\n"
    "  smallmind health      (exit 0 when the server at --addr reports SERVING; works on workers)\n"
    "common flags: --addr HOST:PORT (default localhost:50051), --api-key KEY (or "
    "SMALLMIND_API_KEY)\n";

// Flags that take no value; every other --flag takes one (`--flag v` or `--flag=v`).
const char* const kSwitches[] = {"--deterministic", "--ids",     "--decode",
                                 "--help",          "--offline", "--no-recompute"};

struct Args {
  std::string command;
  std::vector<std::string> positional;
  std::multimap<std::string, std::string> flags;  // repeated flags (--stop) keep every value

  bool Has(const std::string& f) const { return flags.count(f) > 0; }
  std::optional<std::string> Get(const std::string& f) const {
    auto it = flags.find(f);
    if (it == flags.end()) return std::nullopt;
    return it->second;
  }
};

// Usage errors are INVALID_ARGUMENT; main prints them with the usage text.
Result<Args> ParseArgs(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0 || a == "--") {
      if (args.command.empty()) {
        args.command = a;
      } else {
        args.positional.push_back(a);
      }
      continue;
    }
    std::string value;
    if (size_t eq = a.find('='); eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
    } else if (std::find(std::begin(kSwitches), std::end(kSwitches), a) == std::end(kSwitches)) {
      if (i + 1 >= argc) return InvalidArgument(a + " needs a value");
      value = argv[++i];
    } else {
      value = "true";
    }
    args.flags.emplace(a, value);
  }
  return args;
}

template <typename T>
Result<T> ParseNumber(const std::string& flag, const std::string& text) {
  T v{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return InvalidArgument(flag + " expects a number, got '" + text + "'");
  }
  return v;
}

Result<bool> ParseBool(const std::string& flag, const std::string& text) {
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0") return false;
  return InvalidArgument(flag + " expects true or false, got '" + text + "'");
}

// Prints "smallmind: CODE: message" and gives the exit code.
int Fail(const grpc::Status& status) {
  static const char* const kNames[] = {"OK",
                                       "CANCELLED",
                                       "UNKNOWN",
                                       "INVALID_ARGUMENT",
                                       "DEADLINE_EXCEEDED",
                                       "NOT_FOUND",
                                       "ALREADY_EXISTS",
                                       "PERMISSION_DENIED",
                                       "RESOURCE_EXHAUSTED",
                                       "FAILED_PRECONDITION",
                                       "ABORTED",
                                       "OUT_OF_RANGE",
                                       "UNIMPLEMENTED",
                                       "INTERNAL",
                                       "UNAVAILABLE",
                                       "DATA_LOSS",
                                       "UNAUTHENTICATED"};
  const int code = static_cast<int>(status.error_code());
  const char* name = code >= 0 && code <= 16 ? kNames[code] : "UNKNOWN";
  std::fprintf(stderr, "smallmind: %s: %s\n", name, status.error_message().c_str());
  return 1;
}

class Client {
 public:
  explicit Client(const Args& args)
      : stub_(Inference::NewStub(grpc::CreateChannel(args.Get("--addr").value_or("localhost:50051"),
                                                     grpc::InsecureChannelCredentials()))) {
    if (auto key = args.Get("--api-key")) {
      api_key_ = *key;
    } else if (const char* env = std::getenv("SMALLMIND_API_KEY")) {
      api_key_ = env;
    }
  }

  void Prepare(grpc::ClientContext* context) const {
    if (!api_key_.empty()) context->AddMetadata("authorization", "Bearer " + api_key_);
  }
  Inference::Stub& stub() { return *stub_; }

 private:
  std::unique_ptr<Inference::Stub> stub_;
  std::string api_key_;
};

Result<smallmind::v1::GenerateRequest> BuildGenerateRequest(const Args& args) {
  if (args.positional.size() != 1)
    return InvalidArgument(args.command + " takes exactly one prompt");
  smallmind::v1::GenerateRequest request;
  request.set_prompt(args.positional[0]);
  auto* sampling = request.mutable_sampling();
  auto* stopping = request.mutable_stopping();
  if (auto v = args.Get("--max-tokens")) {
    SM_ASSIGN_OR_RETURN(auto n, ParseNumber<uint32_t>("--max-tokens", *v));
    stopping->set_max_new_tokens(n);
  }
  if (auto v = args.Get("--temperature")) {
    SM_ASSIGN_OR_RETURN(auto t, ParseNumber<float>("--temperature", *v));
    sampling->set_temperature(t);
  }
  if (auto v = args.Get("--seed")) {
    SM_ASSIGN_OR_RETURN(auto seed, ParseNumber<uint64_t>("--seed", *v));
    sampling->set_seed(seed);
  }
  if (auto v = args.Get("--top-k")) {
    SM_ASSIGN_OR_RETURN(auto k, ParseNumber<uint32_t>("--top-k", *v));
    sampling->set_top_k(k);
  }
  if (auto v = args.Get("--top-p")) {
    SM_ASSIGN_OR_RETURN(auto p, ParseNumber<float>("--top-p", *v));
    sampling->set_top_p(p);
  }
  if (auto v = args.Get("--deterministic")) {
    SM_ASSIGN_OR_RETURN(bool d, ParseBool("--deterministic", *v));
    request.mutable_runtime()->set_deterministic(d);
  }
  auto [first, last] = args.flags.equal_range("--stop");
  for (auto it = first; it != last; ++it) stopping->add_stop(it->second);
  return request;
}

Result<int> Generate(const Args& args) {
  SM_ASSIGN_OR_RETURN(const smallmind::v1::GenerateRequest request, BuildGenerateRequest(args));
  const bool print_ids = args.Has("--ids");
  Client client(args);
  grpc::ClientContext context;
  client.Prepare(&context);
  auto reader = client.stub().Generate(&context, request);
  smallmind::v1::GenerateResponse message;
  smallmind::v1::GenerateResponse last;
  std::vector<uint32_t> ids;
  while (reader->Read(&message)) {
    std::fwrite(message.text().data(), 1, message.text().size(), stdout);
    std::fflush(stdout);
    ids.insert(ids.end(), message.token_ids().begin(), message.token_ids().end());
    if (message.finish_reason() != smallmind::v1::FINISH_REASON_UNSPECIFIED) last = message;
  }
  if (!ids.empty()) std::fputc('\n', stdout);
  if (print_ids) {
    std::fputs("token ids:", stdout);
    for (uint32_t id : ids) std::printf(" %u", id);
    std::fputc('\n', stdout);
  }
  std::fflush(stdout);
  const grpc::Status status = reader->Finish();
  if (!status.ok()) return Fail(status);
  std::fprintf(stderr,
               "[%s] finish=%s prompt_tokens=%u tokens=%zu ttft_ms=%.1f decode_tok_s=%.1f "
               "worker=%u\n",
               last.request_id().c_str(),
               smallmind::v1::FinishReason_Name(last.finish_reason()).c_str(),
               last.usage().prompt_tokens(), ids.size(), last.timings().ttft_ms(),
               last.timings().decode_tokens_per_s(), last.timings().worker_id());
  return 0;
}

Result<int> Tokenize(const Args& args) {
  smallmind::v1::TokenizeRequest request;
  const bool decode = args.Has("--decode");
  if (decode) {
    if (args.positional.empty()) return InvalidArgument("tokenize --decode takes token ids");
    for (const auto& text : args.positional) {
      SM_ASSIGN_OR_RETURN(uint32_t id, ParseNumber<uint32_t>("token id", text));
      request.mutable_token_ids()->add_ids(id);
    }
  } else {
    if (args.positional.size() != 1) return InvalidArgument("tokenize takes exactly one text");
    request.set_text(args.positional[0]);
    if (auto v = args.Get("--add-bos")) {
      SM_ASSIGN_OR_RETURN(bool add_bos, ParseBool("--add-bos", *v));
      request.set_add_bos(add_bos);
    }
  }
  Client client(args);
  grpc::ClientContext context;
  client.Prepare(&context);
  smallmind::v1::TokenizeResponse response;
  const grpc::Status status = client.stub().Tokenize(&context, request, &response);
  if (!status.ok()) return Fail(status);
  if (decode) {
    std::printf("%s\n", response.text().c_str());
  } else {
    for (int i = 0; i < response.token_ids_size(); ++i) {
      std::printf(i ? " %u" : "%u", response.token_ids(i));
    }
    std::printf("\n");
  }
  return 0;
}

Result<int> Info(const Args& args) {
  Client client(args);
  grpc::ClientContext context;
  client.Prepare(&context);
  smallmind::v1::ModelInfo info;
  const grpc::Status status =
      client.stub().GetModelInfo(&context, smallmind::v1::GetModelInfoRequest(), &info);
  if (!status.ok()) return Fail(status);
  // Every field, present or not, as "name: value" (repeated ones joined by spaces).
  const auto* descriptor = info.GetDescriptor();
  const auto* reflection = info.GetReflection();
  for (int f = 0; f < descriptor->field_count(); ++f) {
    const auto* field = descriptor->field(f);
    std::string line;
    const int n = field->is_repeated() ? reflection->FieldSize(info, field) : 1;
    for (int i = 0; i < n; ++i) {
      std::string value;
      google::protobuf::TextFormat::PrintFieldValueToString(info, field,
                                                            field->is_repeated() ? i : -1, &value);
      line += (i ? " " : "") + value;
    }
    std::printf("%-16s %s\n", (field->name() + ":").c_str(), line.c_str());
  }
  return 0;
}

// grpc.health.v1.Health/Check with hand-encoded messages (the health proto is not installed):
// the request for the whole server is empty; a SERVING response is field 1 = varint 1 (08 01).
Result<int> Health(const Args& args) {
  grpc::GenericStub stub(grpc::CreateChannel(args.Get("--addr").value_or("localhost:50051"),
                                             grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  grpc::Slice empty(std::string{});
  grpc::ByteBuffer request(&empty, 1);  // a default ByteBuffer is no message at all
  grpc::ByteBuffer response;
  std::mutex mu;
  std::condition_variable cv;
  std::optional<grpc::Status> status;
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                 [&](grpc::Status s) {
                   std::lock_guard<std::mutex> lock(mu);
                   status = std::move(s);
                   cv.notify_all();
                 });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return status.has_value(); });
  if (!status->ok()) return Fail(*status);
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (response.Dump(&slices).ok()) {
    for (const grpc::Slice& slice : slices) {
      bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
  }
  const bool serving = bytes == std::string("\x08\x01", 2);
  std::printf("%s\n", serving ? "SERVING" : "NOT_SERVING");
  return serving ? 0 : 1;
}

// "1,2" -> {1, 2}.
Result<std::vector<int>> ParseIntList(const std::string& flag, const std::string& text) {
  std::vector<int> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = std::min(text.find(',', start), text.size());
    SM_ASSIGN_OR_RETURN(int v, ParseNumber<int>(flag, text.substr(start, comma - start)));
    if (v < 1 || v > 256) return InvalidArgument(flag + " values must be in [1, 256]");
    out.push_back(v);
    start = comma + 1;
  }
  return out;
}

// The engine in-process, llama-bench style (pp128 / tg64 per path and thread count).
Result<int> OfflineBench(const Args& args) {
  smallmind::cli::OfflineBenchOptions o;
  if (auto v = args.Get("--model")) o.model = *v;
  if (auto v = args.Get("--tokenizer")) o.tokenizer = *v;
  if (auto v = args.Get("--threads")) {
    SM_ASSIGN_OR_RETURN(o.threads, ParseIntList("--threads", *v));
  }
  if (auto v = args.Get("--repetitions")) {
    SM_ASSIGN_OR_RETURN(o.repetitions, ParseNumber<int>("--repetitions", *v));
    if (o.repetitions < 1 || o.repetitions > 100) {
      return InvalidArgument("--repetitions must be in [1, 100]");
    }
  }
  if (auto v = args.Get("--paths")) {
    o.modes.clear();
    if (v->find("par") != std::string::npos) {
      o.modes.push_back(smallmind::kernels::ExecMode::kParallel);
    }
    if (v->find("det") != std::string::npos) {
      o.modes.push_back(smallmind::kernels::ExecMode::kDeterministic);
    }
    if (o.modes.empty()) return InvalidArgument("--paths takes par, det or par,det");
  }
  o.recompute = !args.Has("--no-recompute");
  SM_RETURN_IF_ERROR(smallmind::cli::RunOfflineBench(o));
  return 0;
}

// Load generator: prints throughput, TTFT and inter-token latency percentiles.
Result<int> Bench(const Args& args) {
  if (args.Has("--offline")) return OfflineBench(args);
  smallmind::cli::LoadBenchOptions options;
  SM_ASSIGN_OR_RETURN(options.request, BuildGenerateRequest(args));
  if (auto v = args.Get("--concurrency")) {
    SM_ASSIGN_OR_RETURN(options.concurrency, ParseNumber<int>("--concurrency", *v));
  }
  if (auto v = args.Get("--requests")) {
    SM_ASSIGN_OR_RETURN(options.requests, ParseNumber<int>("--requests", *v));
  }
  if (auto v = args.Get("--max-seconds")) {
    SM_ASSIGN_OR_RETURN(options.max_seconds, ParseNumber<double>("--max-seconds", *v));
  }
  if (options.concurrency < 1 || options.concurrency > 1024 || options.requests < 1) {
    return InvalidArgument("--concurrency must be in [1, 1024] and --requests >= 1");
  }
  if (auto key = args.Get("--api-key")) {
    options.api_key = *key;
  } else if (const char* env = std::getenv("SMALLMIND_API_KEY")) {
    options.api_key = env;
  }
  Client client(args);
  const smallmind::cli::LoadBenchReport report =
      smallmind::cli::RunLoadBench(client.stub(), options);
  std::fputs(smallmind::cli::FormatLoadBenchReport(options, report).c_str(), stdout);
  return report.failed == 0 ? 0 : 1;
}

Result<int> Run(int argc, char** argv) {
  SM_ASSIGN_OR_RETURN(const Args args, ParseArgs(argc, argv));
  if (args.Has("--help") || args.command.empty()) {
    std::fputs(kUsage, args.command.empty() && !args.Has("--help") ? stderr : stdout);
    return args.Has("--help") ? 0 : 1;
  }
  if (args.command == "generate") return Generate(args);
  if (args.command == "tokenize") return Tokenize(args);
  if (args.command == "info") return Info(args);
  if (args.command == "health") return Health(args);
  if (args.command == "bench") return Bench(args);
  return InvalidArgument("unknown command '" + args.command + "'");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Result<int> exit_code = Run(argc, argv);
    if (exit_code.ok()) return *exit_code;
    std::fprintf(stderr, "smallmind: %s\n%s", exit_code.status().message().c_str(), kUsage);
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "smallmind: %s\n", e.what());
    return 1;
  }
}
