#include "worker/modelgen/builtin_tiny.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "tests/testing/scoped_temp_dir.h"
#include "worker/model/gguf/gguf_reader.h"
#include "worker/modelgen/model_generator.h"

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

// FNV-1a 64 over the bytes: a checksum to compare generations by.
uint64_t Checksum(const void* data, size_t size) {
  uint64_t h = 0xcbf29ce484222325ULL;
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(BuiltinTinyTest, IsTheSameBytesOnEveryCall) {
  const LlamaModel a = MakeBuiltinTinyModel();
  const LlamaModel b = MakeBuiltinTinyModel();
  ASSERT_GT(a.weights.storage.size(), 0u);
  ASSERT_EQ(a.weights.storage.size(), b.weights.storage.size());
  EXPECT_EQ(
      std::memcmp(a.weights.storage.data(), b.weights.storage.data(), a.weights.storage.size()), 0);
}

// builtin:tiny is the generator's default GGUF parsed from memory. Written to a file instead
// (tensor by tensor through a temporary file, another code path), the same options give a file with
// the checksum of the builtin model's bytes, which the reader opens with the documented shapes.
TEST(BuiltinTinyTest, RegeneratedFileHasTheBuiltinBytesAndTheDocumentedShapes) {
  const LlamaModel builtin = MakeBuiltinTinyModel();
  const testing::ScopedTempDir tmp;
  const std::string path = tmp.File("tiny.gguf");
  ASSERT_TRUE(WriteGeneratedModel(GeneratorOptions{}, path).ok());
  const std::vector<uint8_t> file = ReadFile(path);
  ASSERT_EQ(file.size(), builtin.weights.storage.size());
  EXPECT_EQ(Checksum(file.data(), file.size()),
            Checksum(builtin.weights.storage.data(), builtin.weights.storage.size()));
  auto again = GenerateModelBuffer(GeneratorOptions{});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(Checksum(again->data(), again->size()), Checksum(file.data(), file.size()));

  auto opened = GgufFile::Open(path);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  const GgufFile& f = **opened;
  EXPECT_EQ(*f.GetString("general.architecture"), "llama");
  EXPECT_EQ(*f.GetU32("llama.embedding_length"), 64u);
  EXPECT_EQ(*f.GetU32("llama.feed_forward_length"), 172u);
  EXPECT_EQ(*f.GetU32("llama.block_count"), 2u);
  EXPECT_EQ(*f.GetU32("llama.attention.head_count"), 4u);
  EXPECT_EQ(*f.GetU32("llama.attention.head_count_kv"), 2u);
  EXPECT_EQ(*f.GetU32("llama.context_length"), 512u);
  EXPECT_EQ(f.GetStringArray("tokenizer.ggml.tokens")->size(), 259u);
  // dims[0] is the row length: a [rows, cols] matrix has dims {cols, rows}.
  const std::vector<std::pair<std::string, std::array<int64_t, 2>>> shapes = {
      {"token_embd.weight", {64, 259}},       {"output_norm.weight", {64, 1}},
      {"blk.1.attn_norm.weight", {64, 1}},    {"blk.1.attn_q.weight", {64, 64}},
      {"blk.1.attn_k.weight", {64, 32}},      {"blk.1.attn_v.weight", {64, 32}},
      {"blk.1.attn_output.weight", {64, 64}}, {"blk.1.ffn_norm.weight", {64, 1}},
      {"blk.1.ffn_gate.weight", {64, 172}},   {"blk.1.ffn_up.weight", {64, 172}},
      {"blk.1.ffn_down.weight", {172, 64}}};
  for (const auto& [name, dims] : shapes) {
    const GgufTensorInfo* t = f.FindTensor(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->type, kernels::DType::kF32) << name;
    EXPECT_EQ(t->dims[0], dims[0]) << name;
    EXPECT_EQ(t->dims[1], dims[1]) << name;
  }
  EXPECT_EQ(f.tensors().size(), 2u + 2u * 9u);
  EXPECT_EQ(f.FindTensor("output.weight"), nullptr) << "the classifier is tied to token_embd";
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
