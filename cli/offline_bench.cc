#include "cli/offline_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include "kernels/dispatch.h"
#include "shared/cpu_topology.h"
#include "shared/memory_bandwidth.h"
#include "worker/engine/engine.h"
#include "worker/kv/kv_pool.h"
#include "worker/loader/model_loader.h"

namespace smallmind::cli {
namespace {

using worker::Engine;
using worker::KvPool;
using worker::StepPlan;
using worker::TokenId;

constexpr int kPrompt = 128;     // pp128
constexpr int kGenerated = 64;   // tg64
constexpr int kRecomputed = 50;  // new tokens of the recompute baseline
constexpr int kBlockSize = 16;

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// Fixed pseudo-random token ids (no tokenizer needed; the kernels do not care what they mean).
std::vector<TokenId> Tokens(int n, int vocab) {
  std::vector<TokenId> ids;
  for (int i = 0; i < n; ++i) ids.push_back(1 + (i * 7919) % (vocab - 1));
  return ids;
}

// Runs `tokens` at positions start.. as one step of one sequence; returns its wall time.
double Step(Engine& engine, kernels::ExecMode mode, std::span<const TokenId> tokens, int start,
            const std::vector<int32_t>& table) {
  StepPlan plan;
  plan.mode = mode;
  plan.seqs.push_back({tokens, start, table, true});
  auto t0 = std::chrono::steady_clock::now();
  engine.Step(plan);
  return Seconds(std::chrono::steady_clock::now() - t0);
}

struct Row {
  double pp_tok_s = 0;
  double tg_tok_s = 0;
  double cached_tok_s = 0;
  double recompute_tok_s = 0;
};

Row Measure(Engine& engine, kernels::ExecMode mode, int vocab, const std::vector<int32_t>& table,
            const OfflineBenchOptions& o) {
  const std::vector<TokenId> tokens = Tokens(kPrompt + kRecomputed, vocab);
  std::span<const TokenId> all(tokens);
  Row row;
  for (int rep = 0; rep < o.repetitions; ++rep) {
    double pp = Step(engine, mode, all.first(kPrompt), 0, table);
    row.pp_tok_s = std::max(row.pp_tok_s, kPrompt / pp);
    double tg = 0;
    for (int pos = 0; pos < kGenerated; ++pos)
      tg += Step(engine, mode, all.subspan(pos, 1), pos, table);
    row.tg_tok_s = std::max(row.tg_tok_s, kGenerated / tg);
    if (!o.recompute) continue;
    Step(engine, mode, all.first(kPrompt), 0, table);
    double cached = 0, recomputed = 0;
    for (int t = 0; t < kRecomputed; ++t) {
      cached += Step(engine, mode, all.subspan(kPrompt + t, 1), kPrompt + t, table);
    }
    for (int t = 0; t < kRecomputed; ++t) {
      recomputed += Step(engine, mode, all.first(kPrompt + t + 1), 0, table);
    }
    row.cached_tok_s = std::max(row.cached_tok_s, kRecomputed / cached);
    row.recompute_tok_s = std::max(row.recompute_tok_s, kRecomputed / recomputed);
  }
  return row;
}

// Prints the matrix bytes a decoded token reads and the read bandwidth of each thread count;
// returns the bandwidths (bytes/s, by position in `threads`).
std::vector<double> PrintBandwidths(uint64_t matrix_bytes, const std::vector<int>& threads) {
  std::printf("%.1f MiB of matrices read per decoded token; read bandwidth per thread count:",
              static_cast<double>(matrix_bytes) / (1 << 20));
  std::vector<double> bandwidth;
  for (int t : threads) {
    bandwidth.push_back(shared::MeasureReadBandwidth(t));
    std::printf(" %d: %.1f GB/s", t, bandwidth.back() / 1e9);
  }
  std::printf("\n");
  return bandwidth;
}

}  // namespace

shared::Status RunOfflineBench(const OfflineBenchOptions& o) {
  worker::ModelSpec spec;
  spec.model = o.model;
  spec.tokenizer = o.tokenizer;
  SM_ASSIGN_OR_RETURN(std::unique_ptr<worker::LoadedModel> model, worker::LoadModel(spec));
  const worker::ModelConfig& c = model->llama.config;
  if (c.context_length < kPrompt + kRecomputed) {
    return shared::InvalidArgument(
        "the model's context (" + std::to_string(c.context_length) + ") is shorter than the " +
        std::to_string(kPrompt + kRecomputed) + " positions the bench uses");
  }
  SM_RETURN_IF_ERROR(KvPool::CheckType(c, o.kv_type));
  const std::vector<int> allowed = shared::AllowedCpus();
  std::printf("model %s (%s, %s), kernels %s, KV cache %s, prompt %d, generated %d, best of %d\n",
              o.model.c_str(), c.architecture.c_str(), model->quantization.c_str(),
              kernels::IsaName(kernels::BestIsa()), kernels::KvTypeName(o.kv_type), kPrompt,
              kGenerated, o.repetitions);
  const uint64_t matrix_bytes =
      worker::MatrixBytesPerToken(model->llama.config, model->llama.weights);
  const std::vector<double> bandwidth = PrintBandwidths(matrix_bytes, o.threads);
  std::printf(
      "| path | threads | pp%d tok/s | tg%d tok/s | tg %% of read bw | cached %d tok/s | recompute "
      "%d tok/s | cache gain |\n",
      kPrompt, kGenerated, kRecomputed, kRecomputed);
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (size_t ti = 0; ti < o.threads.size(); ++ti) {
    const int threads = o.threads[ti];
    const int blocks = (kPrompt + kRecomputed + kBlockSize - 1) / kBlockSize;
    KvPool pool(c, blocks, kBlockSize, o.kv_type);
    std::vector<int32_t> table;
    for (int b = 0; b < blocks; ++b) table.push_back(b);
    worker::EngineOptions eo;
    eo.max_step_tokens = kPrompt + kRecomputed;
    eo.max_seqs = 1;
    eo.num_threads = threads;
    if (threads <= static_cast<int>(allowed.size())) {
      eo.cpus.assign(allowed.begin(), allowed.begin() + threads);
    }
    Engine engine(c, model->llama.weights, &pool, eo);
    for (kernels::ExecMode mode : o.modes) {
      Row r = Measure(engine, mode, c.vocab_size, table, o);
      const char* path = mode == kernels::ExecMode::kDeterministic ? "deterministic" : "parallel";
      std::printf("| %s | %d | %.1f | %.1f | %.0f%% |", path, threads, r.pp_tok_s, r.tg_tok_s,
                  100.0 * r.tg_tok_s * static_cast<double>(matrix_bytes) / bandwidth[ti]);
      if (o.recompute) {
        std::printf(" %.1f | %.2f | %.1fx |\n", r.cached_tok_s, r.recompute_tok_s,
                    r.cached_tok_s / r.recompute_tok_s);
      } else {
        std::printf(" - | - | - |\n");
      }
      std::fflush(stdout);
    }
  }
  return shared::Status::Ok();
}

}  // namespace smallmind::cli
