// Batch invariance of the deterministic path (DESIGN §4): the logits of one sequence are bitwise
// the same whatever the thread count, the other sequences batched beside it (and its place among
// them) and how its prompt is chunked, for every kernel set this CPU runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/dispatch.h"
#include "tests/worker/engine/moe_models.h"
#include "tests/worker/engine/test_models.h"
#include "worker/engine/engine.h"
#include "worker/model/gguf/gguf_loader.h"
#include "worker/model/gguf/gguf_reader.h"
#include "worker/modelgen/builtin_tiny.h"
#include "worker/modelgen/model_generator.h"

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

// Sliding-window layers (gemma-style interleaved with global ones, and every layer windowed) keep
// the guarantee, and the window really changes what attention read (prompts pass it).
TEST(EngineDeterminismTest, SlidingWindowLogitsAreBitwiseTheSameAcrossThreadsBatchesAndChunking) {
  const LlamaModel full = MakeBuiltinTinyModel();
  for (int period : {2, 0}) {
    LlamaModel m = MakeBuiltinTinyModel();
    m.config.sliding_window = 5;
    m.config.swa_period = period;
    for (kernels::Isa isa : {kernels::Isa::kRef, kernels::BestIsa()}) {
      ExpectBatchInvariant(m, isa, kernels::KvType::kF16);
    }
    EXPECT_NE(worker::Run(m, kernels::BestIsa(), Scenario{}),
              worker::Run(full, kernels::BestIsa(), Scenario{}))
        << "period " << period;
  }
}

// The model modelgen generates for `o`, loaded from memory through the GGUF loader.
LlamaModel GeneratedModel(const GeneratorOptions& o) {
  auto bytes = GenerateModelBuffer(o);
  SM_CHECK(bytes.ok()) << bytes.status().ToString();
  auto file = GgufFile::FromBuffer(*bytes, o.architecture);
  SM_CHECK(file.ok()) << file.status().ToString();
  auto config = GgufModelConfig(**file);
  SM_CHECK(config.ok()) << config.status().ToString();
  WeightStorage storage = WeightStorage::Allocate(bytes->size());
  std::memcpy(storage.mutable_data(), bytes->data(), bytes->size());
  auto weights = MapGgufWeights(**file, *config, std::move(storage));
  SM_CHECK(weights.ok()) << weights.status().ToString();
  return LlamaModel{*config, std::move(weights).value()};
}

// gemma2 (soft-caps small enough to bend, a window of 5 on every other layer) and gemma3 (q/k
// norms, five windowed layers with their own RoPE base, one global) keep the guarantee: GeGLU's
// table lookup, the embedding scale, the post norms and the soft-caps are per element or per row.
TEST(EngineDeterminismTest, GemmaLogitsAreBitwiseTheSameAcrossThreadsBatchesAndChunking) {
  for (const char* arch : {"gemma2", "gemma3"}) {
    GeneratorOptions o;  // tiny: dim 64, 4 heads of 32 over 2 KV heads
    o.architecture = arch;
    o.head_dim = 32;
    o.tied_embeddings = true;
    o.window = 5;
    o.n_layers = o.architecture == "gemma3" ? 6 : 2;
    if (o.architecture == "gemma2") o.attn_softcap = 2.0f;
    o.final_softcap = 3.0f;
    const LlamaModel m = GeneratedModel(o);
    for (kernels::Isa isa : {kernels::Isa::kRef, kernels::BestIsa()}) {
      ExpectBatchInvariant(m, isa, kernels::KvType::kF16);
    }
  }
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

// Mixtures of experts (docs/moe.md): a token's routing, its experts' rows and the slot-order sum
// of their outputs are its own whatever else the step holds, though the step groups its rows by
// expert differently for every batch; so are qwen2moe's shared expert (a dense FFN and its
// sigmoid gate, added after the sum) and olmoe's whole-row q/k norms.
TEST(EngineDeterminismTest,
     MixtureOfExpertsLogitsAreBitwiseTheSameAcrossThreadsBatchesAndChunking) {
  for (const char* arch : {"qwen3moe", "llama", "qwen2moe", "olmoe"}) {
    SCOPED_TRACE(arch);
    for (kernels::DType type : {kernels::DType::kF32, kernels::DType::kQ8_0}) {
      const LlamaModel m = testing::MakeMoeModel(arch, type);
      for (kernels::Isa isa : {kernels::Isa::kRef, kernels::BestIsa()}) {
        ExpectBatchInvariant(m, isa);
      }
    }
  }
}

// gpt-oss (docs/moe.md#gpt-oss): attention sinks (a row-local rescale of each softmax), biases,
// YaRN's per-pair factors, a window of 5 on the even layers, the top-k-then-softmax router and
// the clamped SwiGLU keep the guarantee, in F32 and with MXFP4 experts (llama.cpp's MXFP4_MOE mix).
TEST(EngineDeterminismTest, GptOssLogitsAreBitwiseTheSameAcrossThreadsBatchesAndChunking) {
  for (const char* type : {"f32", "mxfp4_moe"}) {
    GeneratorOptions o;  // tiny's 4 heads over 2 KV heads, 32 wide: q 128 over the 64-wide stream
    o.architecture = "gpt-oss";
    o.tied_embeddings = false;
    o.dim = 64;
    o.hidden_dim = 64;
    o.head_dim = 32;
    o.n_experts = 4;
    o.n_experts_used = 2;
    o.window = 5;
    o.yarn_factor = 8.0f;
    o.rope_orig_context = 64;
    ASSERT_TRUE(SetWeightScheme(type, &o).ok());
    const LlamaModel m = GeneratedModel(o);
    for (kernels::Isa isa : {kernels::Isa::kRef, kernels::BestIsa()}) {
      ExpectBatchInvariant(m, isa, kernels::KvType::kF16);
    }
  }
}

}  // namespace
}  // namespace smallmind::worker
