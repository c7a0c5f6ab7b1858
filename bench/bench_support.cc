#include "bench/bench_support.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <thread>

#include "kernels/dtype.h"
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

Flags ParseFlags(int* argc, char** argv) {
  Flags f;
  int kept = 1;
  for (int i = 1; i < *argc; i++) {
    const std::string_view a = argv[i];
    auto value = [&](std::string_view name) { return std::string(a.substr(name.size())); };
    if (a.starts_with("--model=")) {
      f.model = value("--model=");
    } else if (a.starts_with("--preset=")) {
      f.preset = value("--preset=");
    } else if (a.starts_with("--type=")) {
      f.type = value("--type=");
    } else if (a.starts_with("--threads=")) {
      f.threads.clear();
      for (const std::string& t : Split(a.substr(10))) f.threads.push_back(std::stoi(t));
    } else if (a.starts_with("--paths=")) {
      f.modes.clear();
      for (const std::string& p : Split(a.substr(8))) {
        f.modes.push_back(p == "det" ? kernels::ExecMode::kDeterministic
                                     : kernels::ExecMode::kParallel);
      }
    } else if (a == "--recompute") {
      f.recompute = true;
    } else if (a == "--op-profile") {
      f.op_profile = true;
    } else if (a.starts_with("--kv-dtype=")) {
      const std::optional<kernels::KvType> type = kernels::KvTypeFromName(a.substr(11));
      if (!type) {
        std::fprintf(stderr, "--kv-dtype: %s not in {f16,q8,f32}\n", value("--kv-dtype=").c_str());
        std::exit(2);
      }
      f.kv_type = *type;
    } else if (a.starts_with("--isa=")) {
      const std::optional<kernels::Isa> isa = kernels::IsaFromName(a.substr(6));
      if (!isa || !kernels::CpuSupports(*isa)) {
        std::fprintf(stderr, "--isa: %s is not one of {%s} this CPU runs\n",
                     value("--isa=").c_str(), kernels::IsaNames().c_str());
        std::exit(2);
      }
      f.isa = *isa;
    } else {
      argv[kept++] = argv[i];
    }
  }
  *argc = kept;
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
  m->matrix_bytes = MatrixBytesPerToken(m->llama->weights);
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
