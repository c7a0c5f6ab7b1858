#include "worker/modelgen/builtin_tiny.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace smallmind::worker {
namespace {

TEST(BuiltinTinyTest, HasTheDocumentedShape) {
  const LlamaModel m = MakeBuiltinTinyModel();
  EXPECT_EQ(m.config.dim, 64);
  EXPECT_EQ(m.config.hidden_dim, 172);
  EXPECT_EQ(m.config.n_layers, 2);
  EXPECT_EQ(m.config.n_heads, 4);
  EXPECT_EQ(m.config.n_kv_heads, 2);
  EXPECT_EQ(m.config.vocab_size, 259);
  EXPECT_EQ(m.config.context_length, 512);
  EXPECT_TRUE(ValidateLlamaWeights(m.config, m.weights).ok());
  EXPECT_EQ(m.weights.classifier.data, m.weights.token_embedding.data);
}

TEST(BuiltinTinyTest, IsTheSameBytesOnEveryCall) {
  const LlamaModel a = MakeBuiltinTinyModel();
  const LlamaModel b = MakeBuiltinTinyModel();
  ASSERT_EQ(a.weights.storage.size(), b.weights.storage.size());
  EXPECT_EQ(
      std::memcmp(a.weights.storage.data(), b.weights.storage.data(), a.weights.storage.size()), 0);
  // A fixed value pins the generator itself, so a change to it cannot pass unnoticed.
  EXPECT_EQ(a.weights.token_embedding.f32()[0], -0.457471848f);
  EXPECT_EQ(a.weights.token_embedding.f32()[1], -0.428628743f);
  EXPECT_EQ(a.weights.layers[1].w2.f32()[5], 0.0542515069f);
}

TEST(BuiltinTinyTest, KeepsWeightsSmallAndNormsAtOne) {
  const LlamaModel m = MakeBuiltinTinyModel();
  const LayerWeights& l = m.weights.layers[1];
  for (int i = 0; i < 64; i++) {
    EXPECT_EQ(l.attn_norm.f32()[i], 1.0f);
    EXPECT_EQ(m.weights.final_norm.f32()[i], 1.0f);
  }
  const float bound = 1.0f / std::sqrt(64.0f);
  double sum_sq = 0;
  for (int64_t i = 0; i < l.w1.rows * l.w1.cols; i++) {
    ASSERT_LE(std::fabs(l.w1.f32()[i]), bound);
    sum_sq += double{l.w1.f32()[i]} * l.w1.f32()[i];
  }
  // Uniform on [-b, b] has variance b^2 / 3.
  EXPECT_NEAR(sum_sq / (l.w1.rows * l.w1.cols), bound * bound / 3, 0.1 * bound * bound / 3);
}

}  // namespace
}  // namespace smallmind::worker
