// Latency of running streams while long prompts arrive (issue 9 item 5), through the real
// scheduler and engine in process, so the chunked-prefill limits are chosen from measurements:
//  - steps: the time of one engine step holding d decodes (at position 64) and a prefill chunk of
//    c tokens (at positions 256..; a long prompt's middle), median of --reps: the cost model of
//    chunked prefill (a chunk of c tokens stretches the running streams' next token by
//    T(d + c) - T(d));
//  - arrivals: --streams streams decode (16-token prompts, --stream-tokens tokens each); after
//    stream 1's 32nd token --arrivals prompts of 512 tokens arrive at once (16 output tokens
//    each). Per setting: the streams' inter-token latency p50 / p90 / p99 / max over their whole
//    run (what `smallmind bench` reports for them), p99 / p50, and the arrivals' time to first
//    token (mean, max), as a markdown table.
//
//   arrivals_bench [--model=PATH | --preset=bench-110M --type=q8_0] [--threads=2] [--paths=par]
//                  [--budgets=256] [--prefill-caps=0,8,16,24,32] [--streams=4] [--arrivals=4]
//                  [--stream-tokens=256] [--reps=5] [--no-steps] [--no-arrivals]
//                  [--kv-dtype=f16|q8|f32]
// --budgets are --max-step-tokens values, --prefill-caps --max-prefill-tokens-while-decoding
// values (0: none): a row for each pair. Timings are wall clock: run it on a quiet machine (see
// `uptime`); the served counterpart is bench/arrivals.sh.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_support.h"
#include "shared/command_line.h"
#include "worker/engine/engine.h"
#include "worker/kv/kv_pool.h"
#include "worker/sched/output_queue.h"
#include "worker/sched/scheduler.h"
#include "worker/tokenizer/spm_tokenizer.h"

namespace smallmind::worker::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kBlockSize = 16;      // the worker's default
constexpr int kPromptTokens = 512;  // an arriving prompt
constexpr int kStreamPrompt = 16;   // a running stream's prompt
constexpr int kArrivalOutput = 16;  // tokens each arrival generates
constexpr int kArriveAfter = 32;    // stream tokens before the prompts arrive
constexpr int kMaxSeqs = 32;        // the worker's default --max-seqs

struct Options {
  std::vector<int> budgets = {256};
  std::vector<int> prefill_caps = {0, 8, 16, 24, 32};
  int streams = 4;
  int arrivals = 4;
  int stream_tokens = 256;
  int reps = 5;
  bool steps = true;
  bool arrivals_table = true;
  kernels::KvType kv_type = kernels::KvType::kF16;  // --kv-dtype, as the worker's
  kernels::Isa isa = kernels::Isa::kBest;           // --isa
};

std::vector<TokenId> Tokens(int n, int seed, int vocab) {
  std::mt19937 rng(seed);
  std::vector<TokenId> ids;
  for (int i = 0; i < n; ++i) ids.push_back(1 + static_cast<TokenId>(rng() % (vocab - 1)));
  return ids;
}

// 512, or less when the model's context has no room for it and the arrival's output.
int ArrivalPromptTokens(const LlamaModel& m) {
  return std::min(kPromptTokens, m.config.context_length - kArrivalOutput);
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// The q-quantile of v by nearest rank (v sorted in place).
double Quantile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

EngineOptions MakeEngineOptions(int threads, int max_step_tokens, kernels::Isa isa) {
  EngineOptions o;
  o.isa = isa;
  o.max_step_tokens = max_step_tokens;
  o.max_seqs = kMaxSeqs;
  o.num_threads = threads;
  o.cpus = PinnableCpus(threads);
  return o;
}

// Step time of d decodes plus one prefill chunk of c tokens.
void StepTimes(const LlamaModel& m, int threads, kernels::ExecMode mode, const Options& o) {
  const std::vector<int> decodes = {1, 4, 8, 16};
  const std::vector<int> chunks = {0, 8, 16, 32, 64, 128, 256};
  constexpr int kDecodePos = 64, kChunkPos = 256;
  const int seq_blocks = (kChunkPos + 256) / kBlockSize + 1;
  KvPool kv(m.config, (16 + 1) * seq_blocks, kBlockSize, o.kv_type);
  Engine engine(m.config, m.weights, &kv, MakeEngineOptions(threads, 16 + 256, o.isa));
  std::vector<std::vector<int32_t>> tables(17);
  for (int s = 0; s < 17; ++s) {
    for (int b = 0; b < seq_blocks; ++b) tables[s].push_back(s * seq_blocks + b);
  }
  const std::vector<TokenId> ids = Tokens(kChunkPos + 256, 5, m.config.vocab_size);
  // The K/V every step reads: the decodes' contexts and the chunk's prefix (values do not matter
  // for timing, only that the engine reads real memory).
  std::printf(
      "\nstep time (ms), threads %d, %s: rows = decodes at position %d, columns = prefill "
      "chunk tokens at position %d; median of %d\n\n| decodes |",
      threads, mode == kernels::ExecMode::kDeterministic ? "det" : "par", kDecodePos, kChunkPos,
      o.reps);
  for (int c : chunks) std::printf(" +%d |", c);
  std::printf("\n|---|");
  for (size_t i = 0; i < chunks.size(); ++i) std::printf("---|");
  std::printf("\n");
  for (int d : decodes) {
    std::printf("| %d |", d);
    for (int c : chunks) {
      StepPlan plan;
      plan.mode = mode;
      for (int s = 0; s < d; ++s) {
        plan.seqs.push_back(
            SeqStep{std::span<const TokenId>(ids).subspan(s, 1), kDecodePos, tables[s], true});
      }
      if (c > 0) {
        plan.seqs.push_back(SeqStep{std::span<const TokenId>(ids).subspan(kChunkPos, c), kChunkPos,
                                    tables[16], false});
      }
      engine.Step(plan);  // warm-up
      std::vector<double> t;
      for (int r = 0; r < o.reps; ++r) {
        const auto t0 = Clock::now();
        engine.Step(plan);
        t.push_back(Ms(Clock::now() - t0));
      }
      std::printf(" %.1f |", Quantile(t, 0.5));
      std::fflush(stdout);
    }
    std::printf("\n");
  }
}

// One run of the arrivals scenario under one scheduling setting.
struct ArrivalsResult {
  std::vector<double> itl;   // the streams' gaps between tokens (ms)
  std::vector<double> ttft;  // the arrivals' (ms)
  double wall_ms = 0;
  int steps = 0;
};

ArrivalsResult RunArrivals(const LlamaModel& m, int threads, kernels::ExecMode mode,
                           const Options& o, int budget, int prefill_cap) {
  const int vocab = m.config.vocab_size;
  const int prompt_tokens = ArrivalPromptTokens(m);
  const int blocks = (o.streams * (kStreamPrompt + o.stream_tokens) +
                      o.arrivals * (prompt_tokens + kArrivalOutput)) /
                         kBlockSize +
                     o.streams + o.arrivals + 8;
  KvPool kv(m.config, blocks, kBlockSize, o.kv_type);
  BlockPool pool(blocks, kBlockSize);
  Engine engine(m.config, m.weights, &kv, MakeEngineOptions(threads, budget, o.isa));
  SchedulerOptions so;
  so.max_step_tokens = budget;
  so.max_seqs = kMaxSeqs;
  so.max_prefill_tokens_while_decoding = prefill_cap;
  so.prefix_cache.enabled = false;  // every arrival computes its whole prompt
  Scheduler scheduler(so, &pool, kBlockSize);
  std::unique_ptr<SpmTokenizer> tokenizer = MakeByteLevelTokenizer();
  auto submit = [&](uint64_t id, std::vector<TokenId> prompt, int max_new) {
    SequenceRequest req;
    req.prompt = std::move(prompt);
    req.sampling.temperature = 0;
    req.stopping.max_new_tokens = max_new;
    req.stopping.eos_id = -1;
    req.mode = mode;
    scheduler.Add(std::make_unique<Sequence>(id, std::move(req), *tokenizer, vocab, nullptr));
  };
  // Streams are ids 1..streams, arrivals streams+1...
  for (int s = 1; s <= o.streams; ++s) submit(s, Tokens(kStreamPrompt, s, vocab), o.stream_tokens);
  OutputQueue outputs;
  StepOutput taken;
  StepShape shape;
  StepPlan plan;
  std::map<uint64_t, Clock::time_point> last_token, submitted;
  ArrivalsResult r;
  int stream_tokens = 0;  // tokens of stream 1 so far
  bool arrived = o.arrivals == 0;
  const auto t0 = Clock::now();
  for (int step = 0; step < 1000000; ++step) {
    while (!scheduler.Schedule(&shape)) scheduler.PreemptNewest();
    if (shape.entries.empty()) break;
    scheduler.Apply(shape, &plan);
    engine.Step(plan);
    SampleAndUpdate(
        &scheduler, [&](int i) { return engine.Logits(i); },
        [&](int n, const std::function<void(int)>& body) { engine.ForEach(n, body); });
    const auto now = Clock::now();
    ++r.steps;
    outputs.Publish(scheduler.mutable_output());
    outputs.TryTake(&taken);
    for (const OutputEvent& e : taken.events()) {
      if (e.finished || e.token_count == 0) continue;
      const uint64_t id = e.sequence_id;
      if (id <= static_cast<uint64_t>(o.streams)) {
        if (last_token.count(id)) r.itl.push_back(Ms(now - last_token[id]));
        if (id == 1) ++stream_tokens;
      } else if (!last_token.count(id)) {
        r.ttft.push_back(Ms(now - submitted[id]));
      }
      last_token[id] = now;
    }
    if (!arrived && stream_tokens >= kArriveAfter) {
      arrived = true;
      for (int a = 1; a <= o.arrivals; ++a) {
        const uint64_t id = o.streams + a;
        submitted[id] = Clock::now();
        submit(id, Tokens(prompt_tokens, 100 + a, vocab), kArrivalOutput);
      }
    }
  }
  r.wall_ms = Ms(Clock::now() - t0);
  return r;
}

void ArrivalsTable(const LlamaModel& m, int threads, kernels::ExecMode mode, const Options& o) {
  std::printf(
      "\narrivals, threads %d, %s: %d streams (%d-token prompts, %d tokens each); after token "
      "%d of stream 1, %d prompts of %d tokens arrive (%d tokens each)\n\n"
      "| --max-step-tokens | prefill cap while decoding | steps | stream ITL p50 | p90 | p99 | max "
      "| "
      "p99/p50 | arrival TTFT mean | max | wall s "
      "|\n|---|---|---|---|---|---|---|---|---|---|---|\n",
      threads, mode == kernels::ExecMode::kDeterministic ? "det" : "par", o.streams, kStreamPrompt,
      o.stream_tokens, kArriveAfter, o.arrivals, ArrivalPromptTokens(m), kArrivalOutput);
  for (int cap : o.prefill_caps) {
    for (int budget : o.budgets) {
      ArrivalsResult r = RunArrivals(m, threads, mode, o, budget, cap);
      const double p50 = Quantile(r.itl, 0.5);
      double ttft_sum = 0;
      for (double t : r.ttft) ttft_sum += t;
      std::printf("| %d | %s | %d | %.1f | %.1f | %.1f | %.1f | %.2f | %.0f | %.0f | %.2f |\n",
                  budget, cap > 0 ? std::to_string(cap).c_str() : "-", r.steps, p50,
                  Quantile(r.itl, 0.9), Quantile(r.itl, 0.99), Quantile(r.itl, 1.0),
                  Quantile(r.itl, 0.99) / p50, r.ttft.empty() ? 0 : ttft_sum / r.ttft.size(),
                  Quantile(r.ttft, 1.0), r.wall_ms / 1000);
      std::fflush(stdout);
    }
  }
}

}  // namespace
}  // namespace smallmind::worker::bench

int main(int argc, char** argv) {
  namespace b = smallmind::worker::bench;
  b::Flags flags;
  b::Options o;
  CLI::App app("arrivals_bench");
  smallmind::shared::ConfigureCommandLine(app);
  b::AddBenchFlags(app, flags);
  b::AddIntList(app, "--budgets", o.budgets, "--max-step-tokens values to run")->default_str("256");
  b::AddIntList(app, "--prefill-caps", o.prefill_caps,
                "--max-prefill-tokens-while-decoding values to run (0: none)")
      ->default_str("0,8,16,24,32");
  app.add_option("--streams", o.streams, "streams decoding when the prompts arrive");
  app.add_option("--arrivals", o.arrivals, "512-token prompts arriving at once");
  app.add_option("--stream-tokens", o.stream_tokens, "tokens each stream generates");
  app.add_option("--reps", o.reps, "repetitions of each step-time measurement");
  app.add_flag("--no-steps{false}", o.steps, "skip the step-time table");
  app.add_flag("--no-arrivals{false}", o.arrivals_table, "skip the arrivals table");
  if (const std::optional<int> exit_code =
          smallmind::shared::ParseCommandLineOrExitCode(app, argc, argv)) {
    return *exit_code;
  }
  o.kv_type = flags.kv_type;
  o.isa = flags.isa;
  if (o.streams < 1 || o.streams > 16 || o.arrivals < 0 || o.arrivals > 16 ||
      o.stream_tokens < b::kArriveAfter + 1 || o.reps < 1 || o.budgets.empty() ||
      *std::min_element(o.budgets.begin(), o.budgets.end()) < o.streams + 1) {
    std::fprintf(stderr,
                 "arrivals_bench: --streams in [1, 16], --arrivals in [0, 16], --stream-tokens > "
                 "%d, --reps >= 1, every budget > --streams\n",
                 b::kArriveAfter);
    return 2;
  }
  auto model = b::LoadBenchModel(flags);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
    return 1;
  }
  const smallmind::worker::LlamaModel& m = *(*model)->llama;
  std::printf("model %s\n", (*model)->name.c_str());
  for (int threads : flags.threads) {
    for (smallmind::kernels::ExecMode mode : flags.modes) {
      if (o.steps) b::StepTimes(m, threads, mode, o);
      if (o.arrivals_table) b::ArrivalsTable(m, threads, mode, o);
    }
  }
  return 0;
}
