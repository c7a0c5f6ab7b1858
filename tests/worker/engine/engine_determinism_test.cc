// Batch invariance of the deterministic path (DESIGN §4): the logits of one sequence are bitwise
// the same whatever the thread count, the other sequences batched beside it (and its place among
// them) and how its prompt is chunked, for every kernel set this CPU runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "kernels/dispatch.h"
#include "tests/worker/engine/test_models.h"
#include "worker/engine/engine.h"
#include "worker/modelgen/builtin_tiny.h"

namespace smallmind::worker {
namespace {

using kernels::ExecMode;

constexpr int kBlockSize = 8;
constexpr int kBlocksPerSeq = 6;  // 48 positions per sequence
constexpr int kDecodeSteps = 4;

struct Scenario {
  int threads = 1;
  int batch = 1;    // sequences in the batch, the target among them
  int chunk = 100;  // prompt tokens per step
  kernels::KvType kv_type = kernels::KvType::kF32;
};

// A sequence's prompt and the tokens forced after it, from a fixed formula of its index.
std::vector<TokenId> Tokens(int seq, int vocab) {
  const int n = 9 + (seq * 7) % 23 + kDecodeSteps;
  std::vector<TokenId> ids;
  for (int i = 0; i < n; i++) ids.push_back(1 + (i * 31 + seq * 17) % (vocab - 1));
  return ids;
}

// Logits of the target sequence (index 0 of Tokens) at the end of its prompt and after each forced
// decode token, run beside batch - 1 other sequences, the target placed in the middle.
std::vector<std::vector<float>> Run(const LlamaModel& m, kernels::Isa isa, const Scenario& s) {
  EngineOptions options;
  options.max_step_tokens = 512;
  options.max_seqs = s.batch;
  options.num_threads = s.threads;
  options.parallel_threshold = 1;
  options.isa = isa;
  KvPool pool(m.config, s.batch * kBlocksPerSeq, kBlockSize, s.kv_type);
  Engine engine(m.config, m.weights, &pool, options);
  const int target = s.batch / 2;
  std::vector<std::vector<TokenId>> tokens(s.batch);
  std::vector<std::vector<int32_t>> blocks(s.batch);
  std::vector<int> done(s.batch, 0);
  for (int i = 0; i < s.batch; i++) {
    tokens[i] = Tokens(i == target ? 0 : i + 1, m.config.vocab_size);
    for (int b = 0; b < kBlocksPerSeq; b++) blocks[i].push_back(b * s.batch + (i + b) % s.batch);
  }
  std::vector<std::vector<float>> logits;
  while (done[target] < static_cast<int>(tokens[target].size())) {
    StepPlan plan;
    plan.mode = ExecMode::kDeterministic;
    std::vector<int> in_plan;
    for (int i = 0; i < s.batch; i++) {
      const int total = static_cast<int>(tokens[i].size());
      const int prompt = total - kDecodeSteps;
      if (done[i] >= total) continue;
      const int n = done[i] < prompt ? std::min(s.chunk, prompt - done[i]) : 1;
      plan.seqs.push_back(SeqStep{std::span<const TokenId>(tokens[i]).subspan(done[i], n), done[i],
                                  blocks[i], done[i] + n >= prompt});
      in_plan.push_back(i);
      done[i] += n;
    }
    engine.Step(plan);
    for (size_t j = 0; j < in_plan.size(); j++) {
      if (in_plan[j] != target || !plan.seqs[j].want_logits) continue;
      const std::span<const float> l = engine.Logits(static_cast<int>(j));
      logits.emplace_back(l.begin(), l.end());
    }
  }
  return logits;
}

void ExpectBatchInvariant(const LlamaModel& m, kernels::Isa isa,
                          kernels::KvType kv_type = kernels::KvType::kF32) {
  const std::vector<std::vector<float>> want = Run(m, isa, Scenario{1, 1, 100, kv_type});
  ASSERT_EQ(want.size(), static_cast<size_t>(kDecodeSteps + 1));
  for (int threads : {1, 2, 3}) {
    for (int batch : {1, 3, 17}) {
      for (int chunk : {100, 4, 1}) {
        if (batch == 17 && chunk == 1) continue;  // slow and adds nothing over chunk 4
        EXPECT_EQ(Run(m, isa, Scenario{threads, batch, chunk, kv_type}), want)
            << kernels::IsaName(isa) << ": " << threads << " threads, batch " << batch
            << ", prompt chunks of " << chunk;
      }
    }
  }
}

TEST(EngineDeterminismTest, F32LogitsAreBitwiseTheSameAcrossThreadsBatchesAndChunking) {
  const LlamaModel m = MakeBuiltinTinyModel();
  for (kernels::Isa isa : {kernels::Isa::kRef, kernels::BestIsa()}) ExpectBatchInvariant(m, isa);
}

// The worker's default cache of halves keeps the guarantee: K/V are rounded per element when
// stored, whatever the batch, and read back exactly.
TEST(EngineDeterminismTest, HalfKvCacheLogitsAreBitwiseTheSameAcrossThreadsBatchesAndChunking) {
  const LlamaModel m = MakeBuiltinTinyModel();
  for (kernels::Isa isa : {kernels::Isa::kRef, kernels::BestIsa()}) {
    ExpectBatchInvariant(m, isa, kernels::KvType::kF16);
  }
  // And the halves are not the floats: the cache type really changed what attention read.
  EXPECT_NE(worker::Run(m, kernels::BestIsa(), Scenario{1, 1, 100, kernels::KvType::kF16}),
            worker::Run(m, kernels::BestIsa(), Scenario{}));
}

TEST(EngineDeterminismTest, QuantizedLogitsAreBitwiseTheSameAcrossThreadsBatchesAndChunking) {
  for (kernels::DType type : {kernels::DType::kQ8_0, kernels::DType::kQ4_0}) {
    testing::RandomModelSpec spec;
    spec.config = testing::SmallConfig();
    spec.config.n_layers = 1;
    spec.matrix_type = type;
    const LlamaModel m = testing::MakeRandomModel(spec);
    ExpectBatchInvariant(m, kernels::BestIsa());
  }
}

// An 8-bit cache (--kv-dtype q8) too: each K/V row is quantized alone when stored and each query
// head alone when scored, so no batch, split or chunking changes a bit; and it is not the halves.
TEST(EngineDeterminismTest, Q8KvCacheLogitsAreBitwiseTheSameAcrossThreadsBatchesAndChunking) {
  testing::RandomModelSpec spec;
  spec.config = testing::SmallConfig();  // heads of 32 dims, as a q8 cache needs
  spec.config.n_layers = 1;
  spec.matrix_type = kernels::DType::kQ8_0;
  const LlamaModel m = testing::MakeRandomModel(spec);
  for (kernels::Isa isa : {kernels::Isa::kRef, kernels::BestIsa()}) {
    ExpectBatchInvariant(m, isa, kernels::KvType::kQ8);
  }
  const std::vector<std::vector<float>> q8 =
      worker::Run(m, kernels::BestIsa(), Scenario{1, 1, 100, kernels::KvType::kQ8});
  const std::vector<std::vector<float>> f16 =
      worker::Run(m, kernels::BestIsa(), Scenario{1, 1, 100, kernels::KvType::kF16});
  EXPECT_NE(q8, f16);
  // Close to the halves all the same: the same argmax at every step.
  ASSERT_EQ(q8.size(), f16.size());
  for (size_t i = 0; i < q8.size(); i++) {
    EXPECT_EQ(std::max_element(q8[i].begin(), q8[i].end()) - q8[i].begin(),
              std::max_element(f16[i].begin(), f16[i].end()) - f16[i].begin())
        << "step " << i;
  }
}

}  // namespace
}  // namespace smallmind::worker
