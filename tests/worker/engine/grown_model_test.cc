// "Grown deep" models (GeneratorOptions::grow_layers): with epsilon 0 the grown model computes the
// base model's function exactly, so its greedy tokens and, on the deterministic path, its logits
// are the base model's bit for bit; with epsilon > 0 its output moves away from the base's.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tests/worker/engine/step_driver.h"
#include "worker/modelgen/builtin_tiny.h"
#include "worker/modelgen/model_generator.h"

namespace smallmind::worker {
namespace {

using testing::StepDriver;
using testing::StepDriverOptions;

GeneratorOptions Base(kernels::DType type) {
  GeneratorOptions o;
  o.name = "test-grown";
  o.dim = 64;
  o.hidden_dim = 128;
  o.n_layers = 2;
  o.n_heads = 4;
  o.n_kv_heads = 2;
  o.context_length = 256;
  o.weight_type = type;
  o.tied_embeddings = false;
  o.init = WeightInit::kGaussian;
  o.norm_noise = 0.1f;
  o.classifier_gain = 4.0f;
  return o;
}

GeneratorOptions Grown(kernels::DType type, int extra, float epsilon) {
  GeneratorOptions o = Base(type);
  o.grow_layers = extra;
  o.grow_epsilon = epsilon;
  return o;
}

struct Output {
  std::vector<TokenId> ids;
  std::vector<std::vector<float>> logits;
};

Output Greedy(const LlamaModel& model) {
  StepDriver d(model, StepDriverOptions{.threads = 2});
  SequenceRequest req;
  for (int i = 0; i < 12; ++i) req.prompt.push_back(1 + (i * 41) % 250);
  req.mode = kernels::ExecMode::kDeterministic;
  req.stopping.max_new_tokens = 32;
  req.stopping.eos_id = -1;
  d.Add(1, std::move(req));
  d.RunToIdle();
  EXPECT_EQ(d.stream(1).ids.size(), 32u);
  return {d.stream(1).ids, d.logits(1)};
}

bool SameBits(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size() ||
        std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) != 0) {
      return false;
    }
  }
  return true;
}

TEST(GrownModelTest, EpsilonZeroGivesTheBaseModelsGreedyTokensAndLogits) {
  for (kernels::DType type :
       {kernels::DType::kF32, kernels::DType::kF16, kernels::DType::kQ8_0, kernels::DType::kQ4_0}) {
    const GgufModel base = MakeGeneratedModel(Base(type), "base");
    const GgufModel grown = MakeGeneratedModel(Grown(type, 5, 0.0f), "grown");
    ASSERT_EQ(grown.llama.config.n_layers, 7);
    const Output want = Greedy(base.llama);
    const Output got = Greedy(grown.llama);
    EXPECT_EQ(got.ids, want.ids) << "type " << static_cast<int>(type);
    EXPECT_TRUE(SameBits(got.logits, want.logits)) << "type " << static_cast<int>(type);
  }
}

TEST(GrownModelTest, APositiveEpsilonMovesTheOutput) {
  const GgufModel base = MakeGeneratedModel(Base(kernels::DType::kF32), "base");
  const GgufModel grown = MakeGeneratedModel(Grown(kernels::DType::kF32, 5, 1.0f), "grown");
  const Output want = Greedy(base.llama);
  const Output got = Greedy(grown.llama);
  EXPECT_FALSE(SameBits(got.logits, want.logits));
  EXPECT_NE(got.ids, want.ids);
}

}  // namespace
}  // namespace smallmind::worker
