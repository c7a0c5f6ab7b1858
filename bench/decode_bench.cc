// End-to-end engine throughput, in the shape of llama-bench's pp128 / tg64 so the figures sit side
// by side: prefill of a 128-token prompt in one step (pp128) and single-stream decode of 64 tokens
// from an empty context (tg64), per kernel path and thread count, with GB/s (weight bytes x tok/s)
// and the share of the read bandwidth the same threads measure on this machine. --recompute adds
// the seed's baseline: 50 new tokens after the prompt recomputed from scratch each time (no KV
// cache) against 50 cached decode steps. tg64x8 decodes 8 sequences in lockstep (one step holds
// one token of each, as continuous batching runs 8 streams) and reports their aggregate tok/s;
// tg64x16 the same with 16; tg64x3, tg64x7 and tg64x12 are batches that are not whole 8-token
// matmul tiles (a few streams; a batch that one stream just left). tg64x8@d128 and tg64x1@d128
// decode after a 128-token context (written before the timing), where served streams are: attention
// then reads 128-192 positions per token; the @d512 rows after 512 (a long chat), where attention
// is a larger share of a batched step; pp16@d512 prefills 16 tokens after 512 (the step of a
// prefix-cache hit); pp2@d64, pp5@d64 and pp9@d64 are speculative decoding's chunks (a draft
// model's catch-up, verifications of 4 and 8 drafts); tg64x16@d48 is 16 streams at the depths the
// served C=16 run of bench/many_streams.sh decodes at. --op-profile times every op of the timed
// steps (OpProfile) and adds, per step in microseconds: qkv_us, wo_us, ffn13_us (gate and up),
// ffn2_us (down), cls_us (the classifier), q8_us (quantizing matmul inputs), attn_us, kv_us
// (storing K/V), small_us (norms, RoPE, SwiGLU, adds, embedding), exp13_us / exp2_us (an MoE's
// expert gate and up / down regions; the router is in wo_us) and gap_us (the step's time outside
// any op; dropped_us, if any, is time the profile had no entry left for, inside gap_us). MoE
// experts are packed before the timing (EngineOptions::pack_experts_at_load): the steady state.
//
//   decode_bench [--model=PATH.gguf|PATH.bin]
//                [--preset=bench-110M|bench-1B --type=q8_0|q4_0|q4_k|q6_k|q4_k_m]
//                [--threads=1,2] [--paths=det,par] [--recompute] [--op-profile]
//                [--kv-dtype=f16|q8|f32]
//                [--isa=best|avx2|avxvnni|avx512|amx|ref] [benchmark flags]
// With no model flag it runs builtin:tiny. Presets are generated once with the model generator
// into $TMPDIR (or /tmp) and reused.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "bench/bench_support.h"
#include "worker/engine/engine.h"

namespace smallmind::worker::bench {
namespace {

constexpr int kPrompt = 128;     // pp128
constexpr int kGenerated = 64;   // tg64
constexpr int kRecomputed = 50;  // new tokens of the recompute baseline
constexpr int kBlockSize = 16;
constexpr int kMaxBatch = 16;    // sequences of tg64x16
constexpr int kDepth = 128;      // context before the tokens of the @d128 rows
constexpr int kLongDepth = 512;  // ... of the @d512 rows
// ... of tg64x16@d48: its tokens attend to 49-112 positions (mean 80), as the streams of the served
// C=16 benchmark (bench/many_streams.sh: 17-token prompts, 128 tokens, 17-145 positions, mean 81),
// so that row is the engine's own speed for what that run serves.
constexpr int kServedDepth = 48;
// Blocks one sequence needs for the longest benchmark (prompt + recomputed tokens, or the depth
// and the 64 generated tokens).
constexpr int kSeqBlocks =
    (std::max(kPrompt + kRecomputed, kLongDepth + kGenerated) + kBlockSize) / kBlockSize + 1;

struct Setup {
  const BenchModel* model;
  kernels::ExecMode mode;
  int threads;
  double bandwidth;  // bytes/s the same number of threads reads on this machine
  bool op_profile;   // time every op of the timed steps (--op-profile)
};

// Times the ops of the engine's steps while it lives (when s.op_profile), then adds them to the
// benchmark's counters as microseconds per step, grouped as decode_bench's header says.
class ProfileScope {
 public:
  ProfileScope(benchmark::State& state, const Setup& s, Engine& e)
      : state_(state),
        engine_(e),
        dim_(s.model->llama->config.dim),
        vocab_(s.model->llama->config.vocab_size),
        on_(s.op_profile) {
    if (on_) engine_.set_op_profile(&profile_);
  }
  ~ProfileScope() {
    if (!on_) return;
    engine_.set_op_profile(nullptr);
    const double steps = static_cast<double>(std::max<int64_t>(1, profile_.steps()));
    std::map<std::string, double> us;
    double ops = 0;
    for (const OpProfile::Entry& e : profile_) {
      ops += static_cast<double>(e.ns);
      us[Group(e)] += static_cast<double>(e.ns) / 1e3 / steps;
    }
    us["gap_us"] = (static_cast<double>(profile_.step_ns()) - ops) / 1e3 / steps;
    if (profile_.dropped_ns() > 0)
      us["dropped_us"] = static_cast<double>(profile_.dropped_ns()) / 1e3 / steps;
    for (const auto& [name, v] : us) state_.counters[name] = v;
  }

 private:
  std::string Group(const OpProfile::Entry& e) const {
    switch (e.kind) {
      case OpKind::kMatmul:
        if (e.jobs == 3) return "qkv_us";
        if (e.jobs == 2) return "ffn13_us";
        if (e.rows == vocab_) return "cls_us";
        return e.cols == dim_ ? "wo_us" : "ffn2_us";
      case OpKind::kExpertMatmul: return e.cols == dim_ ? "exp13_us" : "exp2_us";
      case OpKind::kQuantize: return "q8_us";
      case OpKind::kAttention: return "attn_us";
      case OpKind::kStoreKv: return "kv_us";
      default: return "small_us";
    }
  }

  benchmark::State& state_;
  Engine& engine_;
  const int dim_, vocab_;
  const bool on_;
  OpProfile profile_;
};

// One engine per thread count, shared by the benchmarks of that count (building one packs the
// weights, which takes a while for big models).
class Engines {
 public:
  Engines(const BenchModel& m, kernels::KvType kv_type, kernels::Isa isa)
      : model_(m), kv_type_(kv_type), isa_(isa) {}
  Engine& For(int threads) {
    auto& slot = engines_[threads];
    if (!slot.engine) {
      slot.pool = std::make_unique<KvPool>(model_.llama->config, kMaxBatch * kSeqBlocks, kBlockSize,
                                           kv_type_);
      EngineOptions o;
      o.max_step_tokens = kPrompt + kRecomputed;
      o.max_seqs = kMaxBatch;
      o.max_logit_rows = kMaxBatch;  // pp9@d64's 9 rows
      o.num_threads = threads;
      o.cpus = PinnableCpus(threads);
      o.isa = isa_;
      // The steady state: an MoE's experts packed before the timing, not by its first steps.
      o.pack_experts_at_load = true;
      slot.engine =
          std::make_unique<Engine>(model_.llama->config, model_.llama->weights, slot.pool.get(), o);
    }
    return *slot.engine;
  }

 private:
  struct Slot {
    std::unique_ptr<KvPool> pool;
    std::unique_ptr<Engine> engine;
  };
  const BenchModel& model_;
  const kernels::KvType kv_type_;
  const kernels::Isa isa_;
  std::map<int, Slot> engines_;
};

std::vector<TokenId> Prompt(int n, int vocab) {
  std::vector<TokenId> ids;
  for (int i = 0; i < n; i++) ids.push_back(1 + (i * 7919) % (vocab - 1));
  return ids;
}

// The block table of sequence `seq`: its own kSeqBlocks blocks of the pool.
std::vector<int32_t> Table(int seq = 0) {
  std::vector<int32_t> t;
  for (int b = 0; b < kSeqBlocks; b++) t.push_back(seq * kSeqBlocks + b);
  return t;
}

// Runs `tokens` at positions start.. in one step; returns nothing (logits stay in the engine).
void Run(Engine& e, kernels::ExecMode mode, std::span<const TokenId> tokens, int start,
         const std::vector<int32_t>& table) {
  StepPlan plan;
  plan.mode = mode;
  plan.seqs.push_back(SeqStep{tokens, start, table, true});
  e.Step(plan);
}

void Counters(benchmark::State& state, const Setup& s, int tokens_per_iteration, bool streams) {
  state.SetItemsProcessed(state.iterations() * tokens_per_iteration);
  state.counters["tok/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * tokens_per_iteration, benchmark::Counter::kIsRate);
  if (!streams) return;
  // Decode streams every weight byte once per token.
  const double bytes = static_cast<double>(s.model->matrix_bytes) * tokens_per_iteration;
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * bytes / 1e9,
                                              benchmark::Counter::kIsRate);
  state.counters["bw_GB/s"] = s.bandwidth / 1e9;
}

void BM_Prefill(benchmark::State& state, Setup s, Engines* engines) {
  Engine& e = engines->For(s.threads);
  const std::vector<TokenId> prompt = Prompt(kPrompt, s.model->llama->config.vocab_size);
  const std::vector<int32_t> table = Table();
  const ProfileScope profile(state, s, e);
  for (auto _ : state) Run(e, s.mode, prompt, 0, table);
  Counters(state, s, kPrompt, false);
}

// What a prefix-cache hit computes (kv_cache_bench's ttft): the 16 prompt tokens after a cached
// 512-token prefix, in one step; the prefix is written once, before the timing.
void BM_PrefixHit(benchmark::State& state, Setup s, Engines* engines) {
  Engine& e = engines->For(s.threads);
  constexpr int kHitTokens = 16;
  const std::vector<TokenId> prompt =
      Prompt(kLongDepth + kHitTokens, s.model->llama->config.vocab_size);
  const std::vector<int32_t> table = Table();
  for (int c = 0; c < kLongDepth; c += kPrompt) {
    Run(e, s.mode, std::span<const TokenId>(prompt).subspan(c, kPrompt), c, table);
  }
  const ProfileScope profile(state, s, e);
  for (auto _ : state) {
    Run(e, s.mode, std::span<const TokenId>(prompt).subspan(kLongDepth, kHitTokens), kLongDepth,
        table);
  }
  Counters(state, s, kHitTokens, false);
}

// Speculative decoding's chunks: `tokens` tokens after `depth` positions in one step, the step a
// verification of tokens - 1 drafts (pp9@d64: 8 drafts) or a draft model's catch-up (pp2@d64:
// the last draft and the bonus token after a proposal accepted whole) takes. Set beside tg64's
// step time, they give the costs the draft-length controller weighs (draft_controller.h).
void BM_Chunk(benchmark::State& state, Setup s, Engines* engines, int tokens, int depth) {
  Engine& e = engines->For(s.threads);
  const std::vector<TokenId> ids = Prompt(depth + tokens, s.model->llama->config.vocab_size);
  const std::vector<int32_t> table = Table();
  for (int c = 0; c < depth; c += kPrompt) {
    Run(e, s.mode, std::span<const TokenId>(ids).subspan(c, std::min(kPrompt, depth - c)), c,
        table);
  }
  // Logits for every token, as a verification asks (a catch-up asks for the last only).
  StepPlan plan;
  plan.mode = s.mode;
  plan.seqs.push_back(SeqStep{std::span<const TokenId>(ids).subspan(depth, tokens), depth, table,
                              true, tokens > 2 ? tokens : 1});
  const ProfileScope profile(state, s, e);
  for (auto _ : state) e.Step(plan);
  Counters(state, s, tokens, false);
}

void BM_Decode(benchmark::State& state, Setup s, Engines* engines) {
  Engine& e = engines->For(s.threads);
  const std::vector<TokenId> tokens = Prompt(kGenerated, s.model->llama->config.vocab_size);
  const std::vector<int32_t> table = Table();
  const ProfileScope profile(state, s, e);
  for (auto _ : state) {
    for (int pos = 0; pos < kGenerated; pos++) {
      Run(e, s.mode, std::span<const TokenId>(tokens).subspan(pos, 1), pos, table);
    }
  }
  Counters(state, s, kGenerated, true);
}

// `batch` sequences decoding kGenerated tokens each after `depth` positions of context, one token
// of every sequence per step.
void BM_DecodeBatch(benchmark::State& state, Setup s, Engines* engines, int batch, int depth) {
  Engine& e = engines->For(s.threads);
  const std::vector<TokenId> tokens =
      Prompt(depth + kGenerated + batch, s.model->llama->config.vocab_size);
  std::vector<std::vector<int32_t>> tables;
  for (int q = 0; q < batch; q++) tables.push_back(Table(q));
  // The context every step attends to, written once (its values only need to be real memory).
  for (int q = 0; q < batch; q++) {
    for (int c = 0; c < depth; c += kPrompt) {  // in prompt-sized chunks (the step's token cap)
      Run(e, s.mode, std::span<const TokenId>(tokens).subspan(q + c, std::min(kPrompt, depth - c)),
          c, tables[q]);
    }
  }
  StepPlan plan;
  plan.mode = s.mode;
  const ProfileScope profile(state, s, e);
  for (auto _ : state) {
    for (int pos = depth; pos < depth + kGenerated; pos++) {
      plan.seqs.clear();
      for (int q = 0; q < batch; q++) {  // sequence q reads the ids shifted by q
        plan.seqs.push_back(
            SeqStep{std::span<const TokenId>(tokens).subspan(pos + q, 1), pos, tables[q], true});
      }
      e.Step(plan);
    }
  }
  Counters(state, s, kGenerated * batch, false);
}

// The 50 tokens after the prompt: with the cache (the prompt prefilled outside the timing, then
// one step per token) or without (each token recomputes prompt + all tokens so far).
void BM_FiftyTokens(benchmark::State& state, Setup s, Engines* engines, bool cached) {
  Engine& e = engines->For(s.threads);
  const std::vector<TokenId> ids = Prompt(kPrompt + kRecomputed, s.model->llama->config.vocab_size);
  const std::vector<int32_t> table = Table();
  for (auto _ : state) {
    if (cached) {
      state.PauseTiming();
      Run(e, s.mode, std::span<const TokenId>(ids).first(kPrompt), 0, table);
      state.ResumeTiming();
    }
    for (int i = 0; i < kRecomputed; i++) {
      const int pos = kPrompt + i;
      if (cached) {
        Run(e, s.mode, std::span<const TokenId>(ids).subspan(pos, 1), pos, table);
      } else {
        Run(e, s.mode, std::span<const TokenId>(ids).first(pos + 1), 0, table);
      }
    }
  }
  Counters(state, s, kRecomputed, false);
}

// Console output as usual, then one markdown table in llama-bench's layout (model, size, path,
// threads, test, t/s) to set beside llama-bench's.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  explicit SummaryReporter(const BenchModel& m) : ConsoleReporter(OO_None), model_(m) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.error_occurred || r.run_type != Run::RT_Iteration) continue;
      const auto tok = r.counters.find("tok/s");
      const auto gbs = r.counters.find("GB/s");
      const auto bw = r.counters.find("bw_GB/s");
      // "tg64/<model>/par/threads:2/real_time" -> "tg64 par/threads:2"
      std::string name = r.benchmark_name();
      name = name.substr(0, name.find('/')) + " " +
             name.substr(name.find('/', name.find('/') + 1) + 1);
      name = name.substr(0, name.rfind("/real_time"));
      Row row{name, tok == r.counters.end() ? 0 : tok->second.value,
              gbs == r.counters.end() ? 0 : gbs->second.value,
              bw == r.counters.end() ? 0 : bw->second.value, 1};
      // Repetitions (--benchmark_repetitions) of a test keep their best run: on a shared machine
      // the best is the one least disturbed by other load.
      auto same =
          std::find_if(rows_.begin(), rows_.end(), [&](const Row& x) { return x.name == name; });
      if (same == rows_.end()) {
        rows_.push_back(row);
      } else {
        row.runs = same->runs + 1;
        if (row.tok > same->tok) *same = row;
        same->runs = row.runs;
      }
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf(
        "\n| model | size | test (path/threads) | t/s (best of runs) | GB/s | %% of read bw |\n");
    std::printf("|---|---|---|---|---|---|\n");
    for (const Row& r : rows_) {
      std::string bw = "";
      if (r.gbs > 0 && r.bw > 0) bw = std::to_string(static_cast<int>(100 * r.gbs / r.bw + 0.5));
      std::printf("| %s | %.1f MiB | %s | %.2f (%d) | %s | %s |\n", model_.name.c_str(),
                  static_cast<double>(model_.matrix_bytes) / (1 << 20), r.name.c_str(), r.tok,
                  r.runs, r.gbs > 0 ? std::to_string(r.gbs).substr(0, 5).c_str() : "", bw.c_str());
    }
  }

 private:
  struct Row {
    std::string name;
    double tok, gbs, bw;
    int runs;
  };
  const BenchModel& model_;
  std::vector<Row> rows_;
};

}  // namespace
}  // namespace smallmind::worker::bench

int main(int argc, char** argv) {
  namespace b = smallmind::worker::bench;
  using smallmind::kernels::ExecMode;
  b::Flags flags = b::ParseFlags(&argc, argv);
  benchmark::Initialize(&argc, argv);
  auto model = b::LoadBenchModel(flags);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
    return 1;
  }
  b::Engines engines(**model, flags.kv_type, flags.isa);
  for (int threads : flags.threads) {
    const double bandwidth = b::MeasureReadBandwidth(threads);
    for (ExecMode mode : flags.modes) {
      const b::Setup s{model->get(), mode, threads, bandwidth, flags.op_profile};
      const std::string suffix = "/" + (*model)->name + "/" +
                                 (mode == ExecMode::kDeterministic ? "det" : "par") +
                                 "/threads:" + std::to_string(threads);
      benchmark::RegisterBenchmark(("pp128" + suffix).c_str(), b::BM_Prefill, s, &engines)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
      benchmark::RegisterBenchmark(("tg64" + suffix).c_str(), b::BM_Decode, s, &engines)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
      if (b::kLongDepth + 16 <= (*model)->llama->config.context_length) {
        benchmark::RegisterBenchmark(("pp16@d512" + suffix).c_str(), b::BM_PrefixHit, s, &engines)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
      }
      for (auto [name, tokens, depth] :
           {std::tuple{"pp2@d64", 2, 64}, {"pp5@d64", 5, 64}, {"pp9@d64", 9, 64}}) {
        benchmark::RegisterBenchmark((name + suffix).c_str(), b::BM_Chunk, s, &engines, tokens,
                                     depth)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
      }
      for (auto [name, batch, depth] : {std::tuple{"tg64x3", 3, 0},
                                        {"tg64x7", 7, 0},
                                        {"tg64x8", 8, 0},
                                        {"tg64x12", 12, 0},
                                        {"tg64x16", 16, 0},
                                        {"tg64x16@d48", 16, b::kServedDepth},
                                        {"tg64x1@d128", 1, b::kDepth},
                                        {"tg64x8@d128", 8, b::kDepth},
                                        {"tg64x1@d512", 1, b::kLongDepth},
                                        {"tg64x8@d512", 8, b::kLongDepth}}) {
        // A row whose context would pass the model's (builtin:tiny has 512 positions) is left out.
        if (depth + b::kGenerated > (*model)->llama->config.context_length) continue;
        benchmark::RegisterBenchmark((name + suffix).c_str(), b::BM_DecodeBatch, s, &engines, batch,
                                     depth)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
      }
      if (flags.recompute) {
        benchmark::RegisterBenchmark(("kv50" + suffix).c_str(), b::BM_FiftyTokens, s, &engines,
                                     true)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
        benchmark::RegisterBenchmark(("recompute50" + suffix).c_str(), b::BM_FiftyTokens, s,
                                     &engines, false)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime()
            ->Iterations(1);
      }
    }
  }
  b::SummaryReporter reporter(**model);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
