// Prefix cache and KV pool, through the real scheduler and engine in process:
//  - ttft: time to the first token of a request whose 512-token prefix another request left in
//    the cache, against the same request computed from scratch (cold), median of rounds, each
//    round with a prefix of its own, and the first request repeated (its last block runs again:
//    the block that holds a prompt's last token is never taken from the cache, since that token's
//    logits must be computed, and 528 tokens end a block, so 16 tokens run);
//  - utilisation: tokens stored / token slots of the used KV blocks while requests of mixed prompt
//    and output lengths run (sampled after every step; token-weighted mean and minimum).
//
//   kv_cache_bench [--model=PATH | --preset=bench-110M --type=q8_0] [--threads=2]
//                  [--rounds=5] [--requests=48] [--kv-dtype=f16|q8|f32]
// With no model flag it runs builtin:tiny. (Warm restart across processes is measured through
// the gateway: see docs/kv-cache.md, "Warm restart".)
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "shared/command_line.h"
#include "worker/engine/engine.h"
#include "worker/engine/kv_producer.h"
#include "worker/kv/kv_pool.h"
#include "worker/sched/output_queue.h"
#include "worker/sched/scheduler.h"
#include "worker/tokenizer/spm_tokenizer.h"

namespace smallmind::worker::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kBlockSize = 16;    // the worker's default
constexpr int kStepTokens = 256;  // the worker's default --max-step-tokens
constexpr int kMaxSeqs = 16;

// A worker's scheduling core: pool, engine, scheduler with the prefix cache on.
class Core {
 public:
  Core(const LlamaModel& m, int threads, int blocks, kernels::KvType kv_type, kernels::Isa isa)
      : model_(m) {
    kv_ = std::make_unique<KvPool>(m.config, blocks, kBlockSize, kv_type);
    pool_ = std::make_unique<BlockPool>(blocks, kBlockSize);
    EngineOptions eo;
    eo.max_step_tokens = kStepTokens;
    eo.max_seqs = kMaxSeqs;
    eo.num_threads = threads;
    eo.cpus = PinnableCpus(threads);
    eo.isa = isa;
    engine_ = std::make_unique<Engine>(m.config, m.weights, kv_.get(), eo);
    SchedulerOptions so;
    so.max_step_tokens = kStepTokens;
    so.max_seqs = kMaxSeqs;
    so.prefix_cache = WithChainRoots(so.prefix_cache, *engine_, 1);
    scheduler_ = std::make_unique<Scheduler>(so, pool_.get(), kBlockSize);
  }

  void Submit(uint64_t id, std::vector<TokenId> prompt, int max_new) {
    SequenceRequest req;
    req.prompt = std::move(prompt);
    req.sampling.temperature = 0;
    req.stopping.max_new_tokens = max_new;
    req.stopping.eos_id = -1;
    scheduler_->Add(std::make_unique<Sequence>(id, std::move(req), *tokenizer_,
                                               model_.config.vocab_size, nullptr));
  }

  // Steps until idle; after each step calls `after_step`.
  template <typename F>
  void Run(F after_step) {
    for (int steps = 0; steps < 1000000; ++steps) {
      while (!scheduler_->Schedule(&shape_)) scheduler_->PreemptNewest();
      if (shape_.entries.empty()) break;
      scheduler_->Apply(shape_, &plan_);
      engine_->Step(plan_);
      SampleAndUpdate(scheduler_.get(), [this](int i) { return engine_->Logits(i); });
      outputs_.Publish(scheduler_->mutable_output());
      outputs_.TryTake(&taken_);  // the events are not needed: drop them
      after_step(*pool_);
    }
  }
  void Run() {
    Run([](const BlockPool&) {});
  }

 private:
  const LlamaModel& model_;
  std::unique_ptr<SpmTokenizer> tokenizer_ = MakeByteLevelTokenizer();
  std::unique_ptr<KvPool> kv_;
  std::unique_ptr<BlockPool> pool_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Scheduler> scheduler_;
  OutputQueue outputs_;
  StepOutput taken_;
  StepShape shape_;
  StepPlan plan_;
};

std::vector<TokenId> Tokens(int n, int seed, int vocab) {
  std::mt19937 rng(seed);
  std::vector<TokenId> ids;
  for (int i = 0; i < n; ++i) ids.push_back(1 + static_cast<TokenId>(rng() % (vocab - 1)));
  return ids;
}

double ProcessCpuMs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void Ttft(const LlamaModel& m, int threads, int rounds, kernels::KvType kv_type, kernels::Isa isa) {
  const int vocab = m.config.vocab_size;
  // 512 shared tokens (fewer when the context has no room for them and a 16-token suffix).
  const int n = std::min(512, m.config.context_length - 17);
  Core core(m, threads, 4 * (n + 64) / kBlockSize * rounds, kv_type, isa);
  std::vector<double> cold, hit, repeat;
  // Wall time, and the CPU time of the whole process (all threads): on a machine shared with
  // other work the CPU time still shows what the request costs.
  std::vector<double> cold_cpu, hit_cpu;
  auto timed = [&](std::vector<TokenId> prompt, uint64_t id, std::vector<double>* cpu) {
    const auto t0 = Clock::now();
    const double c0 = ProcessCpuMs();
    core.Submit(id, std::move(prompt), 1);  // one token: prefill plus the first sample
    core.Run();
    if (cpu) cpu->push_back(ProcessCpuMs() - c0);
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  for (int r = 0; r < rounds; ++r) {
    const std::vector<TokenId> prefix = Tokens(n, 100 + r, vocab);
    std::vector<TokenId> a = prefix, b = prefix;
    const std::vector<TokenId> sa = Tokens(16, 200 + r, vocab), sb = Tokens(16, 300 + r, vocab);
    a.insert(a.end(), sa.begin(), sa.end());
    b.insert(b.end(), sb.begin(), sb.end());
    cold.push_back(timed(a, 3 * r + 1, &cold_cpu));
    hit.push_back(timed(b, 3 * r + 2, &hit_cpu));
    repeat.push_back(
        timed(a, 3 * r + 3, nullptr));  // the same prompt again: its last block (16 tokens) runs
  }
  const double c = Median(cold), h = Median(hit), again = Median(repeat);
  std::printf(
      "ttft     threads %d, %d-token shared prefix + 16: cold %.2f ms, prefix hit %.2f ms -> "
      "%.1fx sooner; the same prompt again %.2f ms -> %.1fx; CPU time cold %.1f ms, hit %.1f ms "
      "-> %.1fx (medians of %d)\n",
      threads, n, c, h, c / h, again, c / again, Median(cold_cpu), Median(hit_cpu),
      Median(cold_cpu) / Median(hit_cpu), rounds);
  std::fflush(stdout);
}

void Utilisation(const LlamaModel& m, int threads, int requests, kernels::KvType kv_type,
                 kernels::Isa isa) {
  const int vocab = m.config.vocab_size;
  const int context = m.config.context_length;
  const int context_blocks = (context + kBlockSize - 1) / kBlockSize;
  Core core(m, threads, context_blocks * kMaxSeqs, kv_type, isa);
  std::mt19937 rng(7);
  int64_t total_positions = 0;
  for (int i = 0; i < requests; ++i) {
    const int room = std::min(context, 1000);
    const int prompt = 8 + static_cast<int>(rng() % (room * 2 / 3 - 8));
    const int output = 8 + static_cast<int>(rng() % std::max(1, room - prompt - 8));
    total_positions += prompt + output;
    core.Submit(i + 1, Tokens(prompt, 1000 + i, vocab), output);
  }
  double stored = 0, slots = 0, worst = 1;
  int samples = 0;
  const auto t0 = Clock::now();
  core.Run([&](const BlockPool& pool) {
    if (pool.num_used() == 0) return;
    const double s = static_cast<double>(pool.tokens_in_used_blocks());
    const double c = static_cast<double>(pool.num_used()) * kBlockSize;
    stored += s;
    slots += c;
    worst = std::min(worst, s / c);
    ++samples;
  });
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf(
      "utilisation threads %d: %d requests (prompts 8-%d, outputs 8-%d tokens, %lld positions), "
      "%d steps in %.1f s: stored/slots %.1f%% token-weighted, %.1f%% worst step\n",
      threads, requests, std::min(context, 1000) * 2 / 3, std::min(context, 1000),
      static_cast<long long>(total_positions), samples, secs, 100 * stored / slots, 100 * worst);
  std::fflush(stdout);
}

}  // namespace
}  // namespace smallmind::worker::bench

int main(int argc, char** argv) {
  namespace b = smallmind::worker::bench;
  b::Flags flags;
  int rounds = 5, requests = 48;
  CLI::App app("kv_cache_bench");
  smallmind::shared::ConfigureCommandLine(app);
  b::AddBenchFlags(app, flags);
  app.add_option("--rounds", rounds, "rounds of the time-to-first-token measurement");
  app.add_option("--requests", requests, "requests of the utilisation run");
  if (const std::optional<int> exit_code =
          smallmind::shared::ParseCommandLineOrExitCode(app, argc, argv)) {
    return *exit_code;
  }
  auto model = b::LoadBenchModel(flags);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
    return 1;
  }
  std::printf("model %s\n", (*model)->name.c_str());
  for (int threads : flags.threads) {
    b::Ttft(*(*model)->llama, threads, std::max(1, rounds), flags.kv_type, flags.isa);
    b::Utilisation(*(*model)->llama, threads, std::max(1, requests), flags.kv_type, flags.isa);
  }
  return 0;
}
