// Shared pieces of the end-to-end benchmarks: the command line (CLI11, as every program reads it),
// loading or generating the model to run (a GGUF or llama2.c file, a bench preset made once by the
// model generator, or builtin:tiny), the CPUs to pin to, and a read-bandwidth probe. Called from
// benchmark main()s; not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "kernels/dispatch.h"
#include "kernels/exec_mode.h"
#include "kernels/kernels.h"
#include "shared/status.h"
#include "worker/model/weights.h"

namespace smallmind::worker::bench {

struct Flags {
  std::string model;   // --model=PATH (.gguf or llama2.c .bin); empty: preset or builtin:tiny
  std::string preset;  // --preset=bench-110M|bench-1B|tiny
  std::string type = "q8_0";          // --type= weight type of a preset
  std::vector<int> threads = {1, 2};  // --threads=1,2
  std::vector<kernels::ExecMode> modes = {kernels::ExecMode::kDeterministic,
                                          kernels::ExecMode::kParallel};  // --paths=det,par
  bool recompute = false;                                                 // --recompute
  bool op_profile = false;                                                // --op-profile
  kernels::KvType kv_type = kernels::KvType::kF16;  // --kv-dtype=f16|q8|f32 (the worker's default)
  kernels::Isa isa = kernels::Isa::kBest;  // --isa=best|avx2|avxvnni|avx512|amx|ref (kernel set)
};

// Binds the flags above on `app` (a CLI11 app already given shared::ConfigureCommandLine), so a
// benchmark's main() can add its own beside them.
void AddBenchFlags(CLI::App& app, Flags& f);

// "--name=1,2,3" into `field` (an integer list; an empty or ill-formed item is refused).
CLI::Option* AddIntList(CLI::App& app, const std::string& flag, std::vector<int>& field,
                        const std::string& meaning);

// Parses argv as every smallmind program does (shared/command_line.h) into the options bound on
// `app`, except Google Benchmark's own flags (--benchmark_*, --v), which are left in argv, in
// order, for benchmark::Initialize. Returns an exit code when the program must stop: 0 after
// --help, 2 after a message naming an unknown flag, a stray argument or an ill-typed value.
std::optional<int> ParseBenchCommandLine(CLI::App& app, int* argc, char** argv);

// AddBenchFlags + ParseBenchCommandLine for a benchmark with no flags of its own; exits with the
// code ParseBenchCommandLine gives.
Flags ParseFlags(int* argc, char** argv);

struct BenchModel {
  std::string name;  // e.g. "bench-1B-Q4_0" or the file name
  std::unique_ptr<LlamaModel> llama;
  uint64_t matrix_bytes = 0;  // bytes of every matrix one token multiplies by
};

shared::Result<std::unique_ptr<BenchModel>> LoadBenchModel(const Flags& flags);

// The first `threads` CPUs this process may run on (one per thread), or empty if there are fewer.
std::vector<int> PinnableCpus(int threads);

// Aggregate bytes/s `threads` threads read from a 1 GiB buffer (best of 3 passes).
double MeasureReadBandwidth(int threads);

}  // namespace smallmind::worker::bench
