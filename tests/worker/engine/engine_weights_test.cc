// The engine runs every weight type: with the reference kernels, a model whose matrices (and token
// embedding) are quantized gives bitwise the logits of its dequantized F32 copy, since the
// reference matmuls and the embedding lookup dequantize exactly as DequantizeRef does.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/kernels.h"
#include "tests/testing/scoped_temp_dir.h"
#include "tests/worker/engine/test_models.h"
#include "worker/engine/engine.h"
#include "worker/model/gguf/gguf_loader.h"
#include "worker/modelgen/model_generator.h"

namespace smallmind::worker {
namespace {

using kernels::DType;

std::vector<float> PrefillLogits(const LlamaModel& m, const EngineOptions& options,
                                 kernels::ExecMode mode) {
  KvPool pool(m.config, 8, 8);
  Engine engine(m.config, m.weights, &pool, options);
  const std::vector<TokenId> tokens = {1, 17, 250, 3, 99, 42, 7, 300, 5};
  const std::vector<int32_t> blocks = {5, 2};
  StepPlan plan;
  plan.mode = mode;
  plan.seqs.push_back(SeqStep{tokens, 0, blocks, true});
  engine.Step(plan);
  const std::span<const float> logits = engine.Logits(0);
  return std::vector<float>(logits.begin(), logits.end());
}

EngineOptions RefOptions() {
  EngineOptions o;
  o.max_step_tokens = 16;
  o.max_seqs = 2;
  o.isa = kernels::Isa::kRef;
  return o;
}

// A small random model whose matrices and token embedding are all of `type`.
testing::RandomModelSpec SpecOfType(DType type) {
  testing::RandomModelSpec spec;
  spec.config = testing::SmallConfig();
  spec.matrix_type = type;
  spec.embedding_type = type;
  return spec;
}

TEST(EngineWeightsTest, QuantizedModelGivesTheLogitsOfItsDequantizedCopyOnTheReferencePath) {
  for (DType type : kernels::kWeightTypes) {
    const testing::RandomModelSpec spec = SpecOfType(type);
    const LlamaModel quantized = testing::MakeRandomModel(spec);
    const LlamaModel dequantized = testing::DequantizedCopy(quantized);
    const std::vector<float> want =
        PrefillLogits(dequantized, RefOptions(), kernels::ExecMode::kDeterministic);
    EXPECT_EQ(PrefillLogits(quantized, RefOptions(), kernels::ExecMode::kDeterministic), want)
        << kernels::GetDTypeTraits(static_cast<uint32_t>(type))->name;
  }
}

TEST(EngineWeightsTest, EmbeddingTypeMayDifferFromTheMatrices) {
  testing::RandomModelSpec spec;
  spec.config = testing::SmallConfig();
  spec.matrix_type = DType::kQ4_0;
  spec.embedding_type = DType::kQ6_K;
  const LlamaModel quantized = testing::MakeRandomModel(spec);
  const LlamaModel dequantized = testing::DequantizedCopy(quantized);
  EXPECT_EQ(PrefillLogits(quantized, RefOptions(), kernels::ExecMode::kParallel),
            PrefillLogits(dequantized, RefOptions(), kernels::ExecMode::kParallel));
}

TEST(EngineWeightsTest, QkvBiasesChangeTheLogits) {
  testing::RandomModelSpec spec;
  spec.config = testing::SmallConfig();
  spec.biases = true;
  const LlamaModel with = testing::MakeRandomModel(spec);
  LlamaModel without = testing::MakeRandomModel(spec);
  for (LayerWeights& l : without.weights.layers) l.bq = l.bk = l.bv = TensorView{};
  EXPECT_NE(PrefillLogits(with, RefOptions(), kernels::ExecMode::kDeterministic),
            PrefillLogits(without, RefOptions(), kernels::ExecMode::kDeterministic));
}

// rope_freqs.weight (Llama 3.1+) divides each RoPE pair's frequency: all-ones divisors are
// bitwise no tensor; others change the rotation of every position past 0, and so the logits of a
// 9-token prompt, on the reference and the best ISA's kernels. A linear scale changes them too.
TEST(EngineWeightsTest, RopeFreqsAndLinearScalingDriveTheRotation) {
  testing::RandomModelSpec spec;
  spec.config = testing::SmallConfig();
  LlamaModel m = testing::MakeRandomModel(spec);
  const int pairs = m.config.head_dim() / 2;
  std::vector<float> ones(static_cast<size_t>(pairs), 1.0f), factors(ones.size());
  for (int i = 0; i < pairs; i++) factors[i] = 1.0f + 31.0f * static_cast<float>(i) / (pairs - 1);
  const auto freqs_view = [&](const std::vector<float>& v) {
    TensorView t;
    t.type = DType::kF32;
    t.data = v.data();
    t.rows = 1;
    t.cols = static_cast<int64_t>(v.size());
    return t;
  };
  for (kernels::Isa isa : {kernels::Isa::kRef, kernels::BestIsa()}) {
    EngineOptions o = RefOptions();
    o.isa = isa;
    m.weights.rope_freqs = TensorView{};
    const std::vector<float> plain = PrefillLogits(m, o, kernels::ExecMode::kDeterministic);
    m.weights.rope_freqs = freqs_view(ones);
    EXPECT_EQ(PrefillLogits(m, o, kernels::ExecMode::kDeterministic), plain);
    m.weights.rope_freqs = freqs_view(factors);
    EXPECT_NE(PrefillLogits(m, o, kernels::ExecMode::kDeterministic), plain);
    m.weights.rope_freqs = TensorView{};
    m.config.rope_freq_scale = 0.25f;
    EXPECT_NE(PrefillLogits(m, o, kernels::ExecMode::kDeterministic), plain);
    m.config.rope_freq_scale = 1.0f;
  }
}

// max |a - b| / max |b|.
double RelativeError(const std::vector<float>& a, const std::vector<float>& b) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < b.size(); i++) {
    err = std::max(err, static_cast<double>(std::fabs(a[i] - b[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(b[i])));
  }
  return err / scale;
}

// The fast kernels against the reference on quantized models: they differ in summation order, and
// both paths quantize activations to 8 bits for the quantized weight types (Q8_0, Q4_0, Q5_0,
// IQ4_NL, MXFP4, the K-quants, IQ4_XS), which bounds the difference by that quantization error
// rather than by rounding.
TEST(EngineWeightsTest, FastPathsStayCloseToTheReferenceOnQuantizedModels) {
  for (DType type : kernels::kWeightTypes) {
    const testing::RandomModelSpec spec = SpecOfType(type);
    const LlamaModel m = testing::MakeRandomModel(spec);
    EngineOptions fast = RefOptions();
    fast.isa = kernels::Isa::kBest;
    fast.num_threads = 2;
    const std::vector<float> ref =
        PrefillLogits(m, RefOptions(), kernels::ExecMode::kDeterministic);
    const double det =
        RelativeError(PrefillLogits(m, fast, kernels::ExecMode::kDeterministic), ref);
    const double par = RelativeError(PrefillLogits(m, fast, kernels::ExecMode::kParallel), ref);
    const char* name = kernels::GetDTypeTraits(static_cast<uint32_t>(type))->name;
    // Every quantized type's matmul reads Q8 activations; only the float types keep floats.
    const bool q8_input = type != DType::kF32 && type != DType::kF16 && type != DType::kBF16;
    EXPECT_LT(det, q8_input ? 2e-2 : 1e-5) << name;
    EXPECT_LT(par, q8_input ? 2e-2 : 1e-5) << name;
  }
}

// An engine over a mapped Q8_0 file packs the matrices and drops their file pages; whoever reads
// the stored layout afterwards (here the reference kernels) faults the same bytes back in.
TEST(EngineWeightsTest, DroppingThePackedMatricesFilePagesChangesNoResult) {
  GeneratorOptions g = *GeneratorPreset("tiny");
  g.weight_type = DType::kQ8_0;
  g.tied_embeddings = false;
  g.vocab_size = 512;  // PrefillLogits feeds ids up to 300
  const smallmind::testing::ScopedTempDir tmp;
  const std::string path = tmp.File("q8.gguf");
  ASSERT_TRUE(WriteGeneratedModel(g, path).ok());
  shared::Result<GgufModel> m = LoadGgufModel(path);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const std::vector<float> before =
      PrefillLogits(m->llama, RefOptions(), kernels::ExecMode::kDeterministic);
  EngineOptions fast = RefOptions();
  fast.isa = kernels::Isa::kBest;
  const std::vector<float> packed =
      PrefillLogits(m->llama, fast, kernels::ExecMode::kDeterministic);
  EXPECT_EQ(PrefillLogits(m->llama, RefOptions(), kernels::ExecMode::kDeterministic), before);
  EXPECT_LT(RelativeError(packed, before), 2e-2);
}

}  // namespace
}  // namespace smallmind::worker
