// The GGUF loader through the architecture descriptions (worker/model/arch/): Llama 3.x rope_freqs
// and linear rope scaling are read, and every metadata key or tensor the description does not
// implement refuses the file naming it (issue 42 item 5: no silent misreads). Files are generated
// models, copied key by key and tensor by tensor into a GgufWriter with one thing added.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "tests/worker/engine/moe_models.h"
#include "tests/worker/model/gguf_rewrite.h"
#include "worker/model/gguf/gguf_loader.h"
#include "worker/model/gguf/gguf_reader.h"
#include "worker/model/model_fingerprint.h"
#include "worker/modelgen/gguf_writer.h"
#include "worker/modelgen/llama3_rope.h"
#include "worker/modelgen/model_generator.h"

namespace smallmind::worker {
namespace {

GeneratorOptions SmallLlama3() {
  GeneratorOptions o;  // tiny: dim 64, 4 heads of 16
  o.rope_theta = 500000.0f;
  o.llama3_rope_freqs = true;
  return o;
}

TEST(GgufArchTest, Llama3RopeFreqsAreMappedAndChangeTheFingerprint) {
  auto bytes = GenerateModelBuffer(SmallLlama3());
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  std::unique_ptr<GgufFile> f = Parse(*bytes);
  auto c = GgufModelConfig(*f);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->rope_theta, 500000.0f);
  WeightStorage storage = WeightStorage::Allocate(f->file_size());
  std::memcpy(storage.mutable_data(), f->bytes().data(), f->file_size());
  auto w = MapGgufWeights(*f, *c, std::move(storage));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE(w->rope_freqs.present());
  ASSERT_EQ(w->rope_freqs.cols, c->head_dim() / 2);
  const std::vector<float> want = Llama3RopeFactors(c->head_dim(), 500000.0f);
  EXPECT_EQ(std::vector<float>(w->rope_freqs.f32(), w->rope_freqs.f32() + want.size()), want);
  EXPECT_TRUE(ValidateLlamaWeights(*c, *w).ok());
  LlamaModel with{*c, std::move(w).value()};
  const uint64_t fp_with = ModelFingerprint(with);
  with.weights.rope_freqs = TensorView{};
  EXPECT_NE(ModelFingerprint(with), fp_with);
}

TEST(GgufArchTest, Llama3FactorsFollowTheWavelengthBands) {
  const std::vector<float> f = Llama3RopeFactors(64, 500000.0f);
  ASSERT_EQ(f.size(), 32u);
  EXPECT_EQ(f.front(), 1.0f);  // short wavelengths keep their frequency
  EXPECT_EQ(f.back(), 32.0f);  // long ones are divided by the factor
  for (size_t i = 1; i < f.size(); i++) EXPECT_GE(f[i], f[i - 1]) << i;
  bool between = false;
  for (float v : f) between |= v > 1.0f && v < 32.0f;
  EXPECT_TRUE(between);  // and the band in between is smoothed
}

TEST(GgufArchTest, LinearRopeScalingSetsTheFrequencyScale) {
  auto bytes = GenerateModelBuffer(GeneratorOptions{});
  ASSERT_TRUE(bytes.ok());
  const auto scaled = Rewritten(*bytes, [](GgufWriter& w) {
    w.AddString("llama.rope.scaling.type", "linear");
    w.AddF32("llama.rope.scaling.factor", 4.0f);
  });
  auto c = GgufModelConfig(*Parse(scaled));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->rope_freq_scale, 0.25f);
  auto plain = GgufModelConfig(*Parse(*bytes));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->rope_freq_scale, 1.0f);
}

TEST(GgufArchTest, UnimplementedRopeScalingIsRefusedNamingTheKey) {
  auto bytes = GenerateModelBuffer(GeneratorOptions{});
  ASSERT_TRUE(bytes.ok());
  ExpectRefusedNaming(
      Rewritten(*bytes, [](GgufWriter& w) { w.AddString("llama.rope.scaling.type", "yarn"); }),
      "llama.rope.scaling.type");
}

TEST(GgufArchTest, KeysThatChangeTheMathAndAreNotImplementedAreRefusedNamingThem) {
  auto bytes = GenerateModelBuffer(GeneratorOptions{});
  ASSERT_TRUE(bytes.ok());
  ExpectRefusedNaming(
      Rewritten(*bytes, [](GgufWriter& w) { w.AddF32("llama.attn_logit_softcapping", 50.0f); }),
      "llama.attn_logit_softcapping");
  ExpectRefusedNaming(
      Rewritten(*bytes, [](GgufWriter& w) { w.AddF32("llama.final_logit_softcapping", 30.0f); }),
      "llama.final_logit_softcapping");
  ExpectRefusedNaming(
      Rewritten(*bytes, [](GgufWriter& w) { w.AddU32("llama.attention.sliding_window", 4096); }),
      "llama.attention.sliding_window");
  ExpectRefusedNaming(Rewritten(*bytes, [](GgufWriter& w) { w.AddU32("llama.expert_count", 8); }),
                      "llama.expert_count");
  // Partial rotary: fewer rotated dimensions than the head has.
  ExpectRefusedNaming(Rewritten(
                          *bytes, [](GgufWriter& w) { w.AddU32("llama.rope.dimension_count", 8); },
                          "llama.rope.dimension_count"),
                      "llama.rope.dimension_count");
  // Keys at their neutral value, and keys of other prefixes, are fine.
  EXPECT_TRUE(LoadStatus(Rewritten(*bytes, [](GgufWriter& w) {
                w.AddU32("llama.expert_count", 0);
                w.AddBool("llama.attention.causal", true);
                w.AddString("quantize.imatrix.file", "x.dat");
              })).ok());
}

// attention.key_length wider than dim / heads (Qwen3, Gemma): the head size and q_dim follow it,
// and wq / wo are checked against n_heads x head size.
TEST(GgufArchTest, AnExplicitHeadSizeIsReadFromKeyLength) {
  GeneratorOptions o;  // tiny: dim 64, 4 heads, 2 kv heads
  o.head_dim = 32;
  auto bytes = GenerateModelBuffer(o);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  std::unique_ptr<GgufFile> f = Parse(*bytes);
  auto c = GgufModelConfig(*f);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->head_dim(), 32);
  EXPECT_EQ(c->q_dim(), 128);
  EXPECT_EQ(c->kv_dim(), 64);
  EXPECT_TRUE(LoadStatus(*bytes).ok()) << LoadStatus(*bytes).ToString();
  // A head size the tensors do not have is caught by the shape checks.
  const auto narrower = Rewritten(
      *bytes, [](GgufWriter& w) { w.AddU32("llama.attention.key_length", 16); },
      "llama.attention.key_length");
  EXPECT_FALSE(LoadStatus(narrower).ok());
}

TEST(GgufArchTest, KeyAndValueHeadSizesThatDifferAreRefused) {
  GeneratorOptions o;
  o.head_dim = 32;
  auto bytes = GenerateModelBuffer(o);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  ExpectRefusedNaming(
      Rewritten(
          *bytes, [](GgufWriter& w) { w.AddU32("llama.attention.value_length", 16); },
          "llama.attention.value_length"),
      "llama.attention.value_length");
}

TEST(GgufArchTest, TensorsTheArchitectureDoesNotUseAreRefusedNamingThem) {
  auto bytes = GenerateModelBuffer(GeneratorOptions{});
  ASSERT_TRUE(bytes.ok());
  const std::vector<float> ones(16, 1.0f);
  std::vector<uint8_t> data(ones.size() * sizeof(float));
  std::memcpy(data.data(), ones.data(), data.size());
  const int64_t dims[] = {16};
  // qwen3's per-head q norm, a qwen2 bias and phi3's fused qkv in a llama file.
  for (const char* name :
       {"blk.0.attn_q_norm.weight", "blk.1.attn_k.bias", "blk.0.attn_qkv.weight"}) {
    ExpectRefusedNaming(
        Rewritten(*bytes,
                  [&](GgufWriter& w) { w.AddTensor(name, kernels::DType::kF32, dims, data); }),
        name);
  }
}

TEST(GgufArchTest, UnsupportedArchitecturesAreRefusedListingTheSupportedOnes) {
  auto bytes = GenerateModelBuffer(GeneratorOptions{});
  ASSERT_TRUE(bytes.ok());
  const auto mamba = Rewritten(
      *bytes, [](GgufWriter& w) { w.AddString("general.architecture", "mamba"); },
      "general.architecture");
  auto c = GgufModelConfig(*Parse(mamba));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("'mamba' is not supported (supported: llama, qwen2, qwen3, "
                                      "qwen3moe, phi3, smollm3, gemma2, gemma3, bert, gpt-oss, "
                                      "qwen2moe, olmoe)"),
            std::string::npos)
      << c.status().message();
}

// Mixtures of experts (docs/moe.md): the 3-D expert tensors become one view per expert into the
// file's bytes, the routing keys the config, and the fingerprint covers every expert.
TEST(GgufArchTest, ExpertTensorsAreViewedPerExpertAndTheirKeysRead) {
  for (const char* arch : {"qwen3moe", "llama"}) {
    SCOPED_TRACE(arch);
    auto bytes = GenerateModelBuffer(testing::MoeOptions(arch, kernels::DType::kQ8_0));
    ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
    std::unique_ptr<GgufFile> f = Parse(*bytes);
    auto c = GgufModelConfig(*f);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->n_experts, 8);
    EXPECT_EQ(c->n_experts_used, 2);
    EXPECT_EQ(c->expert_ffn_dim, 96);
    EXPECT_TRUE(c->expert_weights_norm);
    WeightStorage storage = WeightStorage::Allocate(f->file_size());
    std::memcpy(storage.mutable_data(), f->bytes().data(), f->file_size());
    auto w = MapGgufWeights(*f, *c, std::move(storage));
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_TRUE(ValidateLlamaWeights(*c, *w).ok());
    const LayerWeights l = w->layers[1];
    EXPECT_FALSE(l.w1.present());
    EXPECT_EQ(l.router.type, kernels::DType::kF32);  // unquantized, as llama.cpp keeps it
    ASSERT_EQ(l.down_exps.count(), 8);
    EXPECT_EQ(l.down_exps[7].rows, 64);
    EXPECT_EQ(l.down_exps[7].cols, 96);
    EXPECT_EQ(l.gate_exps[3].type, kernels::DType::kQ8_0);
    // Consecutive slices of the one tensor in the storage.
    const GgufTensorInfo* t = f->FindTensor("blk.1.ffn_up_exps.weight");
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(static_cast<const std::byte*>(l.up_exps[0].data),
              w->storage.data() + f->data_offset() + t->offset);
    EXPECT_EQ(static_cast<const std::byte*>(l.up_exps[5].data),
              static_cast<const std::byte*>(l.up_exps[0].data) + 5 * l.up_exps[0].bytes());
    LlamaModel m{*c, std::move(w).value()};
    const uint64_t before = ModelFingerprint(m);
    const TensorView& last = m.weights.layers[1].down_exps[7];
    // The last byte of the last expert (heap storage: writable).
    const_cast<std::byte*>(static_cast<const std::byte*>(last.data))[last.bytes() - 1] ^=
        std::byte{1};
    EXPECT_NE(ModelFingerprint(m), before);
  }
}

TEST(GgufArchTest, ExpertFilesThatComputeSomethingElseAreRefusedNamingWhat) {
  auto bytes = GenerateModelBuffer(testing::MoeOptions("qwen3moe", kernels::DType::kF32));
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  // Router weights left unnormalised: llama.cpp's qwen3moe renormalises them whatever the key.
  ExpectRefusedNaming(
      Rewritten(*bytes, [](GgufWriter& w) { w.AddBool("qwen3moe.expert_weights_norm", false); }),
      "qwen3moe.expert_weights_norm");
  EXPECT_TRUE(LoadStatus(Rewritten(*bytes, [](GgufWriter& w) {
                w.AddBool("qwen3moe.expert_weights_norm", true);
              })).ok());
  // A shared expert in a family without one (qwen3moe; qwen2moe has it): its tensor is named.
  const std::vector<uint8_t> data(64 * 96 * sizeof(float));
  const int64_t dims[] = {64, 96};
  ExpectRefusedNaming(Rewritten(*bytes,
                                [&](GgufWriter& w) {
                                  w.AddTensor("blk.0.ffn_gate_shexp.weight", kernels::DType::kF32,
                                              dims, data);
                                }),
                      "blk.0.ffn_gate_shexp.weight");
  // qwen3moe without experts, and experts in a family that has none.
  EXPECT_FALSE(LoadStatus(Rewritten(
                              *bytes, [](GgufWriter& w) { w.AddU32("qwen3moe.expert_count", 0); },
                              "qwen3moe.expert_count"))
                   .ok());
  auto dense = GenerateModelBuffer(GeneratorOptions{});
  ASSERT_TRUE(dense.ok());
  const auto qwen3 = Rewritten(
      *dense, [](GgufWriter& w) { w.AddString("general.architecture", "qwen2"); },
      "general.architecture");
  ExpectRefusedNaming(Rewritten(qwen3, [](GgufWriter& w) { w.AddU32("qwen2.expert_count", 8); }),
                      "qwen2.expert_count");
}

}  // namespace
}  // namespace smallmind::worker
