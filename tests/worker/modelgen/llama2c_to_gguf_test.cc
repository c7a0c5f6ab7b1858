#include "worker/modelgen/llama2c_to_gguf.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels/ref/dequant_ref.h"
#include "tests/testing/scoped_temp_dir.h"
#include "tests/testing/shared_data.h"
#include "worker/model/gguf/gguf_loader.h"
#include "worker/model/gguf/gguf_reader.h"
#include "worker/model/llama2c/llama2c_reader.h"

namespace smallmind::worker {
namespace {

using kernels::DType;

const std::string kModels = testing::SharedDataPath("models");

class Llama2cToGgufTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SM_REQUIRE_SHARED_DATA("models/stories260K.bin");
    SM_REQUIRE_SHARED_DATA("models/tok512.bin");
    dir_ = tmp_.path();
    auto bin = LoadLlama2cCheckpoint(kModels + "/stories260K.bin");
    ASSERT_TRUE(bin.ok()) << bin.status().ToString();
    bin_ = std::make_unique<LlamaModel>(std::move(bin).value());
  }

  // Converts stories260K with `type` and returns the output path.
  std::string Convert(DType type, GgufBuildSummary* summary = nullptr) {
    const std::string path = (dir_ / "stories260K.gguf").string();
    Llama2cConversion conv{kModels + "/stories260K.bin", kModels + "/tok512.bin", type, ""};
    auto s = ConvertLlama2cToGguf(conv, path);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (s.ok() && summary != nullptr) *summary = *s;
    return path;
  }

  testing::ScopedTempDir tmp_;
  std::filesystem::path dir_;
  std::unique_ptr<LlamaModel> bin_;
};

bool SameFloats(const TensorView& a, const TensorView& b) {
  return a.rows == b.rows && a.cols == b.cols && a.type == DType::kF32 && b.type == DType::kF32 &&
         std::memcmp(a.data, b.data, static_cast<size_t>(a.rows * a.cols) * 4) == 0;
}

TEST_F(Llama2cToGgufTest, F32TensorsEqualTheCheckpointFloats) {
  auto m = LoadGgufModel(Convert(DType::kF32));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const ModelConfig& c = m->llama.config;
  EXPECT_EQ(c.dim, 64);
  EXPECT_EQ(c.hidden_dim, 172);
  EXPECT_EQ(c.n_layers, 5);
  EXPECT_EQ(c.n_heads, 8);
  EXPECT_EQ(c.n_kv_heads, 4);
  EXPECT_EQ(c.vocab_size, 512);
  EXPECT_EQ(c.context_length, 512);  // seq_len from the header, not a converter default
  const Weights& got = m->llama.weights;
  const Weights& want = bin_->weights;
  EXPECT_TRUE(SameFloats(got.token_embedding, want.token_embedding));
  EXPECT_TRUE(SameFloats(got.final_norm, want.final_norm));
  EXPECT_EQ(got.classifier.data, got.token_embedding.data);  // shared, as in the checkpoint
  for (int l = 0; l < c.n_layers; l++) {
    const LayerWeights& g = got.layers[l];
    const LayerWeights& w = want.layers[l];
    EXPECT_TRUE(SameFloats(g.attn_norm, w.attn_norm) && SameFloats(g.wq, w.wq) &&
                SameFloats(g.wk, w.wk) && SameFloats(g.wv, w.wv) && SameFloats(g.wo, w.wo) &&
                SameFloats(g.ffn_norm, w.ffn_norm) && SameFloats(g.w1, w.w1) &&
                SameFloats(g.w2, w.w2) && SameFloats(g.w3, w.w3))
        << "layer " << l;
  }
}

TEST_F(Llama2cToGgufTest, VocabularyEqualsTheOneLlamaCppPublishes) {
  auto ours = GgufFile::Open(Convert(DType::kF32));
  auto theirs = GgufFile::Open(kModels + "/stories260K.gguf");
  ASSERT_TRUE(ours.ok() && theirs.ok());
  EXPECT_EQ((*ours)->GetStringArray("tokenizer.ggml.tokens").value(),
            (*theirs)->GetStringArray("tokenizer.ggml.tokens").value());
  EXPECT_EQ((*ours)->GetF32Array("tokenizer.ggml.scores").value(),
            (*theirs)->GetF32Array("tokenizer.ggml.scores").value());
  EXPECT_EQ((*ours)->GetI32Array("tokenizer.ggml.token_type").value(),
            (*theirs)->GetI32Array("tokenizer.ggml.token_type").value());
  for (const char* key : {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
                          "tokenizer.ggml.unknown_token_id"}) {
    EXPECT_EQ((*ours)->GetU32(key).value(), (*theirs)->GetU32(key).value()) << key;
  }
  EXPECT_EQ((*ours)->GetString("general.name").value(), "stories260K");
}

TEST_F(Llama2cToGgufTest, TokenizerEncodesTheGoldenPromptsAsRunCDoes) {
  auto m = LoadGgufModel(Convert(DType::kF32));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  std::ifstream in(kModels + "/golden-greedy.jsonl");
  std::string line;
  int prompts = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const nlohmann::json j = nlohmann::json::parse(line);
    const std::string prompt = j.at("prompt").get<std::string>();
    EXPECT_EQ(m->tokenizer->Encode(prompt, true),
              j.at("prompt_token_ids").get<std::vector<TokenId>>())
        << "prompt \"" << prompt << "\"";
    prompts++;
  }
  EXPECT_EQ(prompts, 3);
}

TEST_F(Llama2cToGgufTest, QuantizesTheMatricesWhoseRowsSplitIntoBlocks) {
  GgufBuildSummary summary;
  auto m = LoadGgufModel(Convert(DType::kQ8_0, &summary));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(summary.notes.size(), 1u);
  EXPECT_NE(summary.notes[0].find("blk.*.ffn_down.weight kept F32"), std::string::npos);
  EXPECT_EQ(summary.parameter_count, 260032u);
  const LayerWeights& got = m->llama.weights.layers[2];
  const LayerWeights& want = bin_->weights.layers[2];
  EXPECT_TRUE(SameFloats(got.w2, want.w2));  // rows of 172: not whole blocks of 32
  ASSERT_EQ(got.w1.type, DType::kQ8_0);
  ASSERT_EQ(m->llama.weights.token_embedding.type, DType::kQ8_0);
  const int64_t n = want.w1.rows * want.w1.cols;
  std::vector<float> deq(static_cast<size_t>(n));
  ASSERT_TRUE(kernels::DequantizeRef(DType::kQ8_0, got.w1.data, deq.data(), n));
  for (int64_t b = 0; b < n / 32; b++) {
    float amax = 0;
    for (int i = 0; i < 32; i++) amax = std::max(amax, std::fabs(want.w1.f32()[b * 32 + i]));
    for (int i = 0; i < 32; i++) {
      // Half a quantization step d = amax / 127, plus up to 127 steps of the scale's fp16
      // rounding (relative 2^-11): 0.5 d + 127 * 2^-11 d < 0.57 d.
      ASSERT_NEAR(deq[b * 32 + i], want.w1.f32()[b * 32 + i], amax / 127 * 0.57f) << b;
    }
  }
}

TEST_F(Llama2cToGgufTest, NamesAMissingTokenizerAndRefusesUnwritableTypes) {
  Llama2cConversion conv{kModels + "/stories260K.bin", (dir_ / "absent.bin").string(), DType::kF32,
                         ""};
  auto s = ConvertLlama2cToGguf(conv, (dir_ / "out.gguf").string());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("absent.bin"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out.gguf"));
  conv.tokenizer_path = kModels + "/tok512.bin";
  conv.type = DType::kBF16;
  auto bf16 = ConvertLlama2cToGguf(conv, (dir_ / "out.gguf").string());
  ASSERT_FALSE(bf16.ok());
  EXPECT_NE(bf16.status().message().find("weight type"), std::string::npos);
  // Q5_K needs rows of whole 256-element super-blocks (stories260K's are 64 wide): they take
  // llama.cpp's fallback for it, Q5_1.
  conv.type = DType::kQ5_K;
  auto ragged = ConvertLlama2cToGguf(conv, (dir_ / "out.gguf").string());
  ASSERT_TRUE(ragged.ok()) << ragged.status().ToString();
  EXPECT_GT(ragged->tensors_per_type.count("Q5_1"), 0u);
}

}  // namespace
}  // namespace smallmind::worker
