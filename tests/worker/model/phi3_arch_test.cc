// phi3 and smollm3 through the GGUF loader (issue 42 item 1): phi3's fused attn_qkv and gate/up
// ffn_up become row-range views of the file's one tensor (no copy) holding the same values as
// llama's separate matrices of the same draws; partial rotary, LongRoPE's factor choice and
// attention factor are read; its sliding-window key is accepted and not applied; smollm3 marks
// every 4th layer as having no RoPE.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "worker/model/gguf/fused_rows.h"
#include "worker/model/gguf/gguf_loader.h"
#include "worker/model/gguf/gguf_reader.h"
#include "worker/modelgen/longrope_factors.h"
#include "worker/modelgen/model_generator.h"

namespace smallmind::worker {
namespace {

struct Loaded {
  ModelConfig config;
  Weights weights;
};

// Reads the config and maps the weights of a generated model (copied into heap storage).
Loaded Load(const GeneratorOptions& o) {
  auto bytes = GenerateModelBuffer(o);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  if (!bytes.ok()) return {};
  auto f = GgufFile::FromBuffer(*bytes, "mem.gguf");
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  if (!f.ok()) return {};
  auto c = GgufModelConfig(**f);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  if (!c.ok()) return {};
  WeightStorage storage = WeightStorage::Allocate((*f)->file_size());
  std::memcpy(storage.mutable_data(), (*f)->bytes().data(), (*f)->file_size());
  auto w = MapGgufWeights(**f, *c, std::move(storage));
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  if (!w.ok()) return {};
  const shared::Status valid = ValidateLlamaWeights(*c, *w);
  EXPECT_TRUE(valid.ok()) << valid.ToString();
  return {*c, std::move(w).value()};
}

GeneratorOptions SmallPhi3() {
  GeneratorOptions o;  // tiny: dim 64, 4 heads of 16 over 2 kv heads, ffn 172, context 512
  o.architecture = "phi3";
  o.rope_dims = 12;  // 3/4 of each head rotates, as Phi-4-mini's
  o.longrope = true;
  o.rope_orig_context = 128;
  o.sliding_window = 32;
  return o;
}

std::vector<uint8_t> Bytes(const TensorView& t) {
  const auto* p = static_cast<const uint8_t*>(t.data);
  return std::vector<uint8_t>(p, p + t.bytes());
}

TEST(Phi3ArchTest, FusedTensorsAreRowViewsHoldingTheSeparateMatrices) {
  const Loaded phi3 = Load(SmallPhi3());
  GeneratorOptions llama_options;  // the same draws, written as separate matrices
  const Loaded llama = Load(llama_options);
  ASSERT_EQ(phi3.weights.layers.size(), 2u);
  for (size_t l = 0; l < phi3.weights.layers.size(); l++) {
    const LayerWeights& p = phi3.weights.layers[l];
    const LayerWeights& want = llama.weights.layers[l];
    // One block of bytes: k right after q, v after k; up right after the gate.
    const auto* q = static_cast<const uint8_t*>(p.wq.data);
    EXPECT_EQ(static_cast<const uint8_t*>(p.wk.data), q + p.wq.bytes());
    EXPECT_EQ(static_cast<const uint8_t*>(p.wv.data), q + p.wq.bytes() + p.wk.bytes());
    EXPECT_EQ(static_cast<const uint8_t*>(p.w3.data),
              static_cast<const uint8_t*>(p.w1.data) + p.w1.bytes());
    for (auto [got, expected] :
         {std::pair{&p.wq, &want.wq}, std::pair{&p.wk, &want.wk}, std::pair{&p.wv, &want.wv},
          std::pair{&p.w1, &want.w1}, std::pair{&p.w3, &want.w3}, std::pair{&p.w2, &want.w2}}) {
      EXPECT_EQ(got->rows, expected->rows) << "layer " << l;
      EXPECT_EQ(Bytes(*got), Bytes(*expected)) << "layer " << l;
    }
  }
}

TEST(Phi3ArchTest, PartialRotaryLongRopeAndTheIgnoredWindowAreRead) {
  const GeneratorOptions o = SmallPhi3();
  const Loaded m = Load(o);
  EXPECT_EQ(m.config.rope_style, RopeStyle::kNeox);
  EXPECT_EQ(m.config.rope_dims, 12);
  EXPECT_EQ(m.config.rotary_dims(), 12);
  // llama.cpp reads phi3's window and applies none: every layer sees the whole context.
  EXPECT_EQ(m.config.sliding_window, 0);
  // 512 > 128: the long factors, and the converter's attention factor for a 4x context.
  const LongRopeFactors want = MakeLongRopeFactors(12, 512, 128);
  EXPECT_FLOAT_EQ(m.config.rope_attn_factor, std::sqrt(1.0f + std::log(4.0f) / std::log(128.0f)));
  ASSERT_TRUE(m.weights.rope_freqs.present());
  ASSERT_EQ(m.weights.rope_freqs.cols, 6);
  EXPECT_EQ(std::vector<float>(m.weights.rope_freqs.f32(), m.weights.rope_freqs.f32() + 6),
            want.long_factors);
  EXPECT_NE(want.long_factors, want.short_factors);
}

TEST(Phi3ArchTest, ShortFactorsWhenTheContextDoesNotExceedTheOriginal) {
  GeneratorOptions o = SmallPhi3();
  o.rope_orig_context = o.context_length;
  const Loaded m = Load(o);
  const LongRopeFactors want = MakeLongRopeFactors(12, 512, 512);
  ASSERT_TRUE(m.weights.rope_freqs.present());
  EXPECT_EQ(std::vector<float>(m.weights.rope_freqs.f32(), m.weights.rope_freqs.f32() + 6),
            want.short_factors);
  EXPECT_EQ(m.config.rope_attn_factor, 1.0f);
}

TEST(Phi3ArchTest, SmolLm3LeavesEveryFourthLayerUnrotated) {
  GeneratorOptions o;
  o.architecture = "smollm3";
  o.n_layers = 8;
  const Loaded m = Load(o);
  EXPECT_EQ(m.config.no_rope_period, 4);
  for (int l = 0; l < 8; l++) EXPECT_EQ(m.config.LayerRotates(l), l != 3 && l != 7) << l;
  EXPECT_EQ(m.config.rope_style, RopeStyle::kInterleaved);
}

TEST(Phi3ArchTest, SplitRowsRefusesCountsThatDoNotAddUpNamingTheTensor) {
  std::vector<float> data(6 * 4);
  TensorView fused{kernels::DType::kF32, data.data(), 6, 4};
  const int64_t good[] = {2, 3, 1};
  auto views = SplitRows(fused, good, "blk.0.attn_qkv.weight");
  ASSERT_TRUE(views.ok());
  EXPECT_EQ((*views)[2].data, data.data() + 5 * 4);
  const int64_t bad[] = {2, 2, 1};
  auto refused = SplitRows(fused, bad, "blk.0.attn_qkv.weight");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("blk.0.attn_qkv.weight has 6 rows"), std::string::npos)
      << refused.status().message();
}

}  // namespace
}  // namespace smallmind::worker
