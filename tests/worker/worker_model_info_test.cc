// GetModelInfo's description of the model (issue 42 item 5): head_dim, RoPE, window and the
// tensor-type mix, as `smallmind info` and /v1/models show them.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/testing/child_process.h"
#include "tests/testing/scoped_temp_dir.h"
#include "tests/worker/in_process_worker.h"

namespace smallmind::worker {
namespace {

v1::ModelInfo InfoOf(const std::string& model) {
  WorkerConfig config;
  config.model.model = model;
  testing::InProcessWorker w(config);
  auto stub = w.NewStub();
  grpc::ClientContext context;
  v1::ModelInfo info;
  const grpc::Status status = stub->GetModelInfo(&context, v1::GetModelInfoRequest(), &info);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return info;
}

TEST(WorkerModelInfoTest, TinyShowsItsShapeRopeAndTensorMix) {
  const v1::ModelInfo info = InfoOf("builtin:tiny");
  ASSERT_GT(info.heads(), 0u);
  EXPECT_EQ(info.head_dim(), info.embedding_dim() / info.heads());
  EXPECT_FLOAT_EQ(info.rope_theta(), 10000.0f);
  EXPECT_EQ(info.rope_scaling(), "none");
  EXPECT_FLOAT_EQ(info.rope_scaling_factor(), 1.0f);
  EXPECT_FALSE(info.rope_freqs());
  EXPECT_EQ(info.sliding_window(), 0u);
  EXPECT_EQ(info.windowed_layers(), 0u);
  EXPECT_EQ(info.rotary_dims(), info.head_dim());
  EXPECT_EQ(info.no_rope_period(), 0u);
  EXPECT_FLOAT_EQ(info.rope_attn_factor(), 1.0f);
  EXPECT_FALSE(info.rope_style().empty());
  // The mix lists exactly the types of tensor_types, sorted, each with tensors and bytes.
  ASSERT_EQ(info.tensor_mix_size(), info.tensor_types_size());
  uint32_t tensors = 0;
  uint64_t bytes = 0;
  for (int i = 0; i < info.tensor_mix_size(); ++i) {
    const v1::TensorTypeUse& use = info.tensor_mix(i);
    EXPECT_EQ(use.type(), info.tensor_types(i));
    if (i > 0) {
      EXPECT_LT(info.tensor_mix(i - 1).type(), use.type());
    }
    EXPECT_GT(use.tensors(), 0u) << use.type();
    EXPECT_GT(use.bytes(), 0u) << use.type();
    tensors += use.tensors();
    bytes += use.bytes();
  }
  // Per layer 2 norms + 7 matrices, plus embedding and final norm (the classifier is tied or
  // not: one more at most).
  EXPECT_GE(tensors, info.layers() * 9 + 2);
  EXPECT_LE(tensors, info.layers() * 9 + 3);
  // Every parameter is stored in at most 4 bytes.
  EXPECT_LE(bytes, info.parameter_count() * 4);
  EXPECT_GT(bytes, 0u);
}

// Writes `smallmind-modelgen --preset tiny FLAGS` into `dir` as NAME; its path.
std::string Generated(const smallmind::testing::ScopedTempDir& dir, const std::string& name,
                      const std::vector<std::string>& flags) {
  const std::string path = dir.File(name);
  std::vector<std::string> argv = {smallmind::testing::BinaryPath("smallmind-modelgen"), "--preset",
                                   "tiny"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-o", path});
  auto child = smallmind::testing::ChildProcess::Spawn(argv);
  EXPECT_TRUE(child.ok()) << child.status().ToString();
  if (child.ok()) {
    EXPECT_EQ((*child)->Wait(std::chrono::milliseconds(60000)), 0) << name;
  }
  return path;
}

TEST(WorkerModelInfoTest, ALlama3FileShowsItsFrequencyFactorsAndTheta) {
  const smallmind::testing::ScopedTempDir dir("model-info");
  const v1::ModelInfo info =
      InfoOf(Generated(dir, "llama3.gguf", {"--rope-freqs", "llama3", "--rope-theta", "500000"}));
  EXPECT_TRUE(info.rope_freqs());
  EXPECT_FLOAT_EQ(info.rope_theta(), 500000.0f);
  uint32_t f32_tensors = 0;
  for (const v1::TensorTypeUse& use : info.tensor_mix()) {
    if (use.type() == "F32") f32_tensors = use.tensors();
  }
  EXPECT_GE(f32_tensors, info.layers() * 2 + 2) << "norms and rope_freqs are F32";
}

// The per-layer facts of the families that switch them on: gemma3's windowed layers and their
// own rope base, smollm3's layers without RoPE, phi3's partial rotary and LongRoPE factor.
TEST(WorkerModelInfoTest, FamiliesShowTheirWindowedLayersRopeLayersAndRotaryDims) {
  const smallmind::testing::ScopedTempDir dir("model-info");
  const v1::ModelInfo gemma3 =
      InfoOf(Generated(dir, "gemma3.gguf",
                       {"--arch", "gemma3", "--layers", "6", "--window", "16", "--rope-theta",
                        "1000000", "--final-softcap", "20"}));
  EXPECT_EQ(gemma3.sliding_window(), 16u);
  EXPECT_EQ(gemma3.windowed_layers(), 5u);
  EXPECT_FLOAT_EQ(gemma3.rope_theta(), 1000000.0f);
  EXPECT_FLOAT_EQ(gemma3.rope_theta_windowed(), 10000.0f);
  EXPECT_FLOAT_EQ(gemma3.attn_softcap(), 0.0f);
  EXPECT_FLOAT_EQ(gemma3.final_softcap(), 20.0f);
  const v1::ModelInfo smollm3 =
      InfoOf(Generated(dir, "smollm3.gguf", {"--arch", "smollm3", "--layers", "4"}));
  EXPECT_EQ(smollm3.no_rope_period(), 4u);
  EXPECT_EQ(smollm3.windowed_layers(), 0u);
  const v1::ModelInfo phi3 = InfoOf(Generated(
      dir, "phi3.gguf",
      {"--arch", "phi3", "--rope-dims", "8", "--longrope", "--rope-orig-context", "128"}));
  EXPECT_EQ(phi3.head_dim(), 16u);
  EXPECT_EQ(phi3.rotary_dims(), 8u);
  EXPECT_TRUE(phi3.rope_freqs());
  EXPECT_GT(phi3.rope_attn_factor(), 1.0f);
  // gpt-oss: yarn with its factor and temperature, the even layer of two windowed, its experts.
  const v1::ModelInfo gpt_oss =
      InfoOf(Generated(dir, "gpt-oss.gguf",
                       {"--arch", "gpt-oss", "--experts", "4", "--experts-used", "2", "--window",
                        "16", "--yarn-factor", "32", "--rope-orig-context", "128"}));
  EXPECT_EQ(gpt_oss.rope_scaling(), "yarn");
  EXPECT_FLOAT_EQ(gpt_oss.rope_scaling_factor(), 32.0f);
  EXPECT_NEAR(gpt_oss.rope_attn_factor(), 1.0 + 0.1 * std::log(32.0), 1e-5);
  EXPECT_EQ(gpt_oss.rope_style(), "neox");
  EXPECT_EQ(gpt_oss.sliding_window(), 16u);
  EXPECT_EQ(gpt_oss.windowed_layers(), 1u);
  EXPECT_EQ(gpt_oss.experts(), 4u);
  EXPECT_EQ(gpt_oss.experts_used(), 2u);
  EXPECT_EQ(gpt_oss.shared_expert_ffn_dim(), 0u);
  // qwen2moe: its shared expert's width beside the routed experts'.
  const v1::ModelInfo qwen2moe = InfoOf(Generated(
      dir, "qwen2moe.gguf",
      {"--arch", "qwen2moe", "--experts", "4", "--experts-used", "2", "--shared-ffn", "64"}));
  EXPECT_EQ(qwen2moe.experts(), 4u);
  EXPECT_EQ(qwen2moe.expert_ffn_dim(), 172u);  // tiny's --ffn
  EXPECT_EQ(qwen2moe.shared_expert_ffn_dim(), 64u);
}

}  // namespace
}  // namespace smallmind::worker
