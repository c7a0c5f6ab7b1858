// Single-sequence decode throughput of the engine: each iteration generates kDecodeTokens tokens
// greedily from BOS (positions 0..kDecodeTokens-1), one token per Step. items_per_second is tok/s.
// Models: ../shared/models/stories260K.bin (or --model=PATH to a llama2.c checkpoint) and
// builtin:tiny.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "worker/engine/engine.h"
#include "worker/model/builtin_tiny.h"
#include "worker/model/llama2c_reader.h"

namespace smallmind::worker {
namespace {

constexpr int kDecodeTokens = 256;
constexpr int kBlockSize = 16;

TokenId Argmax(std::span<const float> logits) {
  int best = 0;
  for (int i = 1; i < static_cast<int>(logits.size()); i++) {
    if (logits[i] > logits[best]) best = i;
  }
  return best;
}

void BM_Decode(benchmark::State& state, const LlamaModel* model) {
  const int n_blocks = kDecodeTokens / kBlockSize;
  KvPool pool(model->config, n_blocks, kBlockSize);
  Engine engine(model->config, model->weights, &pool, EngineOptions{1, 1});
  std::vector<int32_t> table;
  for (int b = 0; b < n_blocks; b++) table.push_back(b);
  StepPlan plan;
  plan.seqs.resize(1);
  for (auto _ : state) {
    TokenId token = 1;  // BOS
    for (int pos = 0; pos < kDecodeTokens; pos++) {
      plan.seqs[0] = SeqStep{std::span<const TokenId>(&token, 1), pos, table, true};
      engine.Step(plan);
      token = Argmax(engine.Logits(0));
    }
    benchmark::DoNotOptimize(token);
  }
  state.SetItemsProcessed(state.iterations() * kDecodeTokens);
}

// ../shared/models/stories260K.bin next to this checkout, found from this source file's path.
std::string DefaultModelPath() {
  return (std::filesystem::path(__FILE__).parent_path() / "../../shared/models/stories260K.bin")
      .lexically_normal()
      .string();
}

}  // namespace
}  // namespace smallmind::worker

int main(int argc, char** argv) {
  using smallmind::worker::LlamaModel;
  std::string path = smallmind::worker::DefaultModelPath();
  std::vector<char*> args;
  for (int i = 0; i < argc; i++) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--model=")) {
      path = std::string(arg.substr(8));
    } else {
      args.push_back(argv[i]);
    }
  }
  int n_args = static_cast<int>(args.size());
  benchmark::Initialize(&n_args, args.data());

  const LlamaModel tiny = smallmind::worker::MakeBuiltinTinyModel();
  benchmark::RegisterBenchmark("BM_Decode/builtin_tiny", smallmind::worker::BM_Decode, &tiny);
  auto loaded = smallmind::worker::LoadLlama2cCheckpoint(path);
  if (loaded.ok()) {
    benchmark::RegisterBenchmark("BM_Decode/stories260K", smallmind::worker::BM_Decode,
                                 &loaded.value());
  } else {
    std::fprintf(stderr, "skipping the llama2.c model: %s\n", loaded.status().ToString().c_str());
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
