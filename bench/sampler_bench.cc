// Google Benchmark of Sampler::Sample() (worker/sample), the per-sequence serial step between
// engine steps: vocabularies of 32000 (llama 2) and 128256 (llama 3), temperature sampling plain,
// with top-p, with top-k, and greedy. Logits are a fixed random draw shaped like a model's (normal,
// sd 3), so top-p keeps a realistic few hundred tokens.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "kernels/vector_math.h"
#include "worker/sample/sampler.h"

namespace smallmind::worker {
namespace {

std::vector<float> ModelLikeLogits(int vocab) {
  std::mt19937 rng(42);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> logits(vocab);
  for (float& l : logits) l = normal(rng);
  return logits;
}

void BM_Sample(benchmark::State& state, SamplingParams params) {
  const int vocab = static_cast<int>(state.range(0));
  const std::vector<float> logits = ModelLikeLogits(vocab);
  std::vector<float> work = logits;
  Sampler sampler(params, vocab);
  SampleLogprobs logprobs;
  for (auto _ : state) {
    // Sample() may rewrite logits in place (penalties; none here), so each call sees the same.
    TokenId id = sampler.Sample(work, params.logprobs > 0 ? &logprobs : nullptr);
    benchmark::DoNotOptimize(id);
    sampler.Accept(id);  // the next draw uses a new counter, as in decoding
  }
  state.SetItemsProcessed(state.iterations());
}

SamplingParams Params(float temperature, int top_k, float top_p, int logprobs = 0) {
  SamplingParams p;
  p.logprobs = logprobs;
  p.temperature = temperature;
  p.top_k = top_k;
  p.top_p = top_p;
  p.seed = 7;
  return p;
}

// The vector-math kernels the sampler's common path runs, per ISA, for vocab 32000.
void BM_VectorMath(benchmark::State& state, kernels::Isa isa, int op) {
  const kernels::VectorMathOps& ops = kernels::VectorMathFor(isa);
  const std::vector<float> logits = ModelLikeLogits(32000);
  std::vector<float> out(logits.size());
  const int n = static_cast<int>(logits.size());
  for (auto _ : state) {
    if (op == 0) benchmark::DoNotOptimize(ops.max_value(logits.data(), n));
    if (op == 1) ops.exp_of_scaled(logits.data(), out.data(), n, 12.0f, 0.8f);
    if (op == 2) benchmark::DoNotOptimize(ops.sum_to_double(logits.data(), n));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK_CAPTURE(BM_VectorMath, max_ref, kernels::Isa::kRef, 0);
BENCHMARK_CAPTURE(BM_VectorMath, max_best, kernels::Isa::kBest, 0);
BENCHMARK_CAPTURE(BM_VectorMath, exp_ref, kernels::Isa::kRef, 1);
BENCHMARK_CAPTURE(BM_VectorMath, exp_best, kernels::Isa::kBest, 1);
BENCHMARK_CAPTURE(BM_VectorMath, sum_ref, kernels::Isa::kRef, 2);
BENCHMARK_CAPTURE(BM_VectorMath, sum_best, kernels::Isa::kBest, 2);

BENCHMARK_CAPTURE(BM_Sample, t0_8, Params(0.8f, 0, 1.0f))->Arg(32000)->Arg(128256);
BENCHMARK_CAPTURE(BM_Sample, t0_8_top_p0_9, Params(0.8f, 0, 0.9f))->Arg(32000)->Arg(128256);
BENCHMARK_CAPTURE(BM_Sample, t0_8_top_k40, Params(0.8f, 40, 1.0f))->Arg(32000)->Arg(128256);
BENCHMARK_CAPTURE(BM_Sample, greedy, Params(0.0f, 0, 1.0f))->Arg(32000)->Arg(128256);
BENCHMARK_CAPTURE(BM_Sample, greedy_logprobs5, Params(0.0f, 0, 1.0f, 5))->Arg(32000)->Arg(128256);

}  // namespace
}  // namespace smallmind::worker

BENCHMARK_MAIN();
