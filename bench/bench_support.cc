#include "bench/bench_support.h"

#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <thread>

#include "kernels/dtype.h"
#include "shared/command_line.h"
#include "shared/cpu_topology.h"
#include "shared/memory_bandwidth.h"
#include "worker/model/gguf/gguf_loader.h"
#include "worker/model/llama2c/llama2c_reader.h"
#include "worker/modelgen/builtin_tiny.h"
#include "worker/modelgen/model_generator.h"

namespace smallmind::worker::bench {
namespace {

std::vector<std::string> Split(std::string_view s) {
  std::vector<std::string> out;
  while (!s.empty()) {
    const size_t comma = s.find(',');
    out.emplace_back(s.substr(0, comma));
    s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
  }
  return out;
}

// The preset's GGUF in the temp directory, generated on first use.
shared::Result<std::string> PresetFile(const Flags& f) {
  SM_ASSIGN_OR_RETURN(GeneratorOptions options, GeneratorPreset(f.preset));
  SM_RETURN_IF_ERROR(SetWeightScheme(f.type, &options));
  const char* tmp = std::getenv("TMPDIR");
  std::string type = f.type;  // e.g. "q4_k_m" -> "Q4_K_M"
  for (char& c : type) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const std::string path =
      std::string(tmp ? tmp : "/tmp") + "/smallmind-bench-" + f.preset + "-" + type + ".gguf";
  if (!std::filesystem::exists(path)) {
    std::fprintf(stderr, "generating %s ...\n", path.c_str());
    SM_RETURN_IF_ERROR(WriteGeneratedModel(options, path).status());
  }
  return path;
}

}  // namespace

CLI::Option* AddIntList(CLI::App& app, const std::string& flag, std::vector<int>& field,
                        const std::string& meaning) {
  return app
      .add_option_function<std::string>(
          flag,
          [flag, &field](const std::string& text) {
            std::vector<int> values;
            for (const std::string& item : Split(text)) {
              int value = 0;
              const char* end = item.data() + item.size();
              const auto [ptr, ec] = std::from_chars(item.data(), end, value);
              if (item.empty() || ec != std::errc() || ptr != end) {
                throw CLI::ValidationError(
                    flag, "expects integers separated by commas, got '" + text + "'");
              }
              values.push_back(value);
            }
            field = std::move(values);
          },
          meaning)
      ->type_name("LIST");
}

void AddBenchFlags(CLI::App& app, Flags& f) {
  app.add_option("--model", f.model, "model file (.gguf or llama2.c .bin)")
      ->type_name("PATH")
      ->default_str("--preset, else builtin:tiny");
  app.add_option("--preset", f.preset,
                 "model generator preset (bench-110M, bench-1B, tiny), made once into $TMPDIR");
  app.add_option("--type", f.type, "weight type of a preset (q8_0, q4_0, q4_k, q6_k, q4_k_m, ...)");
  AddIntList(app, "--threads", f.threads, "engine thread counts to run, e.g. 1,2")
      ->default_str("1,2");
  app.add_option_function<std::string>(
         "--paths",
         [&f](const std::string& text) {
           f.modes.clear();
           for (const std::string& p : Split(text)) {
             if (p != "det" && p != "par") {
               throw CLI::ValidationError("--paths", "takes det and/or par, got '" + p + "'");
             }
             f.modes.push_back(p == "det" ? kernels::ExecMode::kDeterministic
                                          : kernels::ExecMode::kParallel);
           }
         },
         "kernel paths to run: det, par or det,par")
      ->type_name("LIST")
      ->default_str("det,par");
  app.add_flag("--recompute", f.recompute, "add the no-KV-cache baseline (decode_bench)");
  app.add_flag("--op-profile", f.op_profile, "time every op of the timed steps (decode_bench)");
  app.add_option_function<std::string>(
         "--kv-dtype",
         [&f](const std::string& text) {
           const std::optional<kernels::KvType> type = kernels::KvTypeFromName(text);
           if (!type) throw CLI::ValidationError("--kv-dtype", text + " is not f16, q8 or f32");
           f.kv_type = *type;
         },
         "element type of the KV cache: f16, q8 or f32")
      ->type_name("TYPE")
      ->default_str("f16");
  app.add_option_function<std::string>(
         "--isa",
         [&f](const std::string& text) {
           const std::optional<kernels::Isa> isa = kernels::IsaFromName(text);
           if (!isa || !kernels::CpuSupports(*isa)) {
             throw CLI::ValidationError(
                 "--isa", text + " is not one of {" + kernels::IsaNames() + "} this CPU runs");
           }
           f.isa = *isa;
         },
         "kernel set")
      ->type_name("ISA")
      ->default_str("best");
}

std::optional<int> ParseBenchCommandLine(CLI::App& app, int* argc, char** argv) {
  // Google Benchmark's flags stay in argv (after argv[0]); the rest goes to CLI11.
  std::vector<const char*> ours = {argv[0]};
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string_view a = argv[i];
    if (a.starts_with("--benchmark_") || a.starts_with("--v=")) {
      argv[kept++] = argv[i];
    } else {
      ours.push_back(argv[i]);
    }
  }
  *argc = kept;
  app.footer("Google Benchmark's --benchmark_* flags are passed on to it.");
  return shared::ParseCommandLineOrExitCode(app, static_cast<int>(ours.size()), ours.data());
}

Flags ParseFlags(int* argc, char** argv) {
  Flags f;
  CLI::App app(std::filesystem::path(argv[0]).filename().string());
  shared::ConfigureCommandLine(app);
  AddBenchFlags(app, f);
  if (const std::optional<int> exit_code = ParseBenchCommandLine(app, argc, argv)) {
    std::exit(*exit_code);
  }
  return f;
}

shared::Result<std::unique_ptr<BenchModel>> LoadBenchModel(const Flags& f) {
  auto m = std::make_unique<BenchModel>();
  std::string path = f.model;
  if (path.empty() && !f.preset.empty()) {
    SM_ASSIGN_OR_RETURN(path, PresetFile(f));
  }
  if (path.empty()) {
    m->name = "builtin-tiny";
    m->llama = std::make_unique<LlamaModel>(MakeBuiltinTinyModel());
  } else if (path.ends_with(".gguf")) {
    SM_ASSIGN_OR_RETURN(GgufModel g, LoadGgufModel(path));
    m->llama = std::make_unique<LlamaModel>(std::move(g.llama));
    m->name = std::filesystem::path(path).stem().string();
  } else {
    SM_ASSIGN_OR_RETURN(LlamaModel l, LoadLlama2cCheckpoint(path));
    m->llama = std::make_unique<LlamaModel>(std::move(l));
    m->name = std::filesystem::path(path).stem().string();
  }
  m->matrix_bytes = MatrixBytesPerToken(m->llama->config, m->llama->weights);
  std::fprintf(stderr, "model %s: dim %d, %d layers, %.1f MiB of matrices per token\n",
               m->name.c_str(), m->llama->config.dim, m->llama->config.n_layers,
               static_cast<double>(m->matrix_bytes) / (1 << 20));
  return m;
}

std::vector<int> PinnableCpus(int threads) {
  // The CPUs of the process as it started: once an engine has run, its pool has pinned this
  // (the calling) thread to its first CPU, and asking again would see that one CPU only; the
  // next engine's pool would then run unpinned on it, every thread inheriting the one CPU (a
  // 2-thread kv_cache_bench after a 1-thread one measured one core's prefill).
  static const std::vector<int> allowed = shared::AllowedCpus();
  std::vector<int> cpus = allowed;
  if (static_cast<int>(cpus.size()) < threads) return {};
  cpus.resize(static_cast<size_t>(threads));
  return cpus;
}

double MeasureReadBandwidth(int threads) {
  const double best = shared::MeasureReadBandwidth(threads);
  std::fprintf(stderr, "read bandwidth, %d thread(s): %.2f GB/s\n", threads, best / 1e9);
  return best;
}

}  // namespace smallmind::worker::bench
