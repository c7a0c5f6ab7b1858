// Sliding-window decode at long context (issue 42, "decode tok/s at 8k context on a windowed model
// stays >= 0.8x of its speed at 512"): single-stream decode of --tokens tokens after each of
// --depths positions of context (written before the timing, in prefill steps of 512), best of
// --reps, per thread count, and each depth's speed as a share of the first depth's. A windowed
// layer reads at most --window positions whatever the depth; a global one reads them all.
//
//   window_bench --model=PATH.gguf [--window=512 --swa-period=6] [--depths=512,8192]
//                [--tokens=32] [--reps=3] [--threads=2] [--kv-dtype=f16] [--isa=best]
//                [--op-profile (adds attention ms per token)]
// --window forces a window onto the file's layers (swa_period as ModelConfig: 0 every layer, n
// all but every n-th; 6 is gemma3's 5 local : 1 global), for files whose architecture the loader
// reads without one; 0 keeps the file's own. The model's context must hold the deepest depth plus
// --tokens (smallmind-modelgen --context).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "shared/command_line.h"
#include "worker/engine/engine.h"
#include "worker/engine/op_profile.h"
#include "worker/kv/kv_pool.h"

namespace smallmind::worker::bench {
namespace {

constexpr int kBlockSize = 16;
constexpr int kPrefillChunk = 512;  // positions of one context-writing step

struct WindowFlags {
  int window = 0;
  int swa_period = 6;
  std::vector<int> depths = {512, 8192};
  int tokens = 32;
  int reps = 3;
};

// Decode tok/s of `tokens` steps after `depth` positions (best of `reps`); with `profile`, the
// timed steps' attention milliseconds per step into *attn_ms.
double DecodeAt(Engine& e, int depth, const WindowFlags& w, int vocab, bool profile,
                double* attn_ms) {
  std::vector<TokenId> ids;
  for (int i = 0; i < depth + w.tokens; i++) ids.push_back(1 + (i * 7919) % (vocab - 1));
  std::vector<int32_t> table;
  for (int b = 0; b * kBlockSize < depth + w.tokens; b++) table.push_back(b);
  StepPlan plan;
  plan.mode = kernels::ExecMode::kParallel;
  auto run = [&](int start, int n) {
    plan.seqs.clear();
    plan.seqs.push_back(SeqStep{std::span<const TokenId>(ids).subspan(start, n), start, table,
                                start + n == depth + w.tokens});
    e.Step(plan);
  };
  for (int c = 0; c < depth; c += kPrefillChunk) run(c, std::min(kPrefillChunk, depth - c));
  OpProfile ops;
  if (profile) e.set_op_profile(&ops);
  double best = 0;
  for (int r = 0; r < w.reps; r++) {
    const auto start = std::chrono::steady_clock::now();
    for (int pos = depth; pos < depth + w.tokens; pos++) run(pos, 1);
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, w.tokens / s);
  }
  e.set_op_profile(nullptr);
  double attn_ns = 0;
  for (const OpProfile::Entry& x : ops) attn_ns += x.kind == OpKind::kAttention ? x.ns : 0;
  *attn_ms = attn_ns / 1e6 / static_cast<double>(std::max<int64_t>(1, ops.steps()));
  return best;
}

void Report(const BenchModel& m, const Flags& flags, const WindowFlags& w) {
  const ModelConfig& c = m.llama->config;
  const int deepest = *std::max_element(w.depths.begin(), w.depths.end());
  const int blocks = (deepest + w.tokens + kBlockSize - 1) / kBlockSize;
  int global = 0;
  for (int l = 0; l < c.n_layers; l++) global += c.LayerWindow(l) == 0 ? 1 : 0;
  std::printf("model %s: %d layers (%d global), window %d, kv %s\n", m.name.c_str(), c.n_layers,
              global, c.sliding_window, flags.kv_type == kernels::KvType::kF16 ? "f16" : "other");
  std::printf("| threads | depth | decode tok/s | vs depth %d | attention ms/token |\n",
              w.depths[0]);
  std::printf("|---|---|---|---|---|\n");
  for (int threads : flags.threads) {
    KvPool pool(c, blocks, kBlockSize, flags.kv_type);
    EngineOptions o;
    o.max_step_tokens = kPrefillChunk;
    o.max_seqs = 1;
    o.num_threads = threads;
    o.cpus = PinnableCpus(threads);
    o.isa = flags.isa;
    Engine e(c, m.llama->weights, &pool, o);
    double first = 0;
    for (int depth : w.depths) {
      double attn_ms = 0;
      const double tps = DecodeAt(e, depth, w, c.vocab_size, flags.op_profile, &attn_ms);
      if (first == 0) first = tps;
      const std::string attn = flags.op_profile ? std::to_string(attn_ms).substr(0, 6) : "";
      std::printf("| %d | %d | %.2f | %.3f | %s |\n", threads, depth, tps, tps / first,
                  attn.c_str());
    }
  }
}

}  // namespace
}  // namespace smallmind::worker::bench

int main(int argc, char** argv) {
  namespace b = smallmind::worker::bench;
  b::Flags flags;
  flags.threads = {2};
  b::WindowFlags w;
  CLI::App app("window_bench");
  smallmind::shared::ConfigureCommandLine(app);
  b::AddBenchFlags(app, flags);
  app.add_option("--window", w.window, "force this sliding window (0: the file's own)");
  app.add_option("--swa-period", w.swa_period,
                 "with --window: 0 every layer, n all but every n-th");
  b::AddIntList(app, "--depths", w.depths, "context positions before the timed decode");
  app.add_option("--tokens", w.tokens, "decode steps timed per depth");
  app.add_option("--reps", w.reps, "repetitions per depth (the best is kept)");
  if (const std::optional<int> exit_code =
          smallmind::shared::ParseCommandLineOrExitCode(app, argc, argv)) {
    return *exit_code;
  }
  auto model = b::LoadBenchModel(flags);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
    return 1;
  }
  smallmind::worker::ModelConfig& c = (*model)->llama->config;
  if (w.window > 0) {
    c.sliding_window = w.window;
    c.swa_period = w.swa_period;
  }
  const int deepest = w.depths.empty() ? 0 : *std::max_element(w.depths.begin(), w.depths.end());
  if (w.depths.empty() || w.tokens < 1 || w.reps < 1 || deepest + w.tokens > c.context_length) {
    std::fprintf(stderr,
                 "--depths (non-empty) + --tokens (%d) must fit the model's context of %d "
                 "positions; --tokens and --reps >= 1\n",
                 deepest + w.tokens, c.context_length);
    return 2;
  }
  b::Report(**model, flags, w);
  return 0;
}
