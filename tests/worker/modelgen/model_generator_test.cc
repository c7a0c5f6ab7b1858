#include "worker/modelgen/model_generator.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kernels/ref/dequant_ref.h"
#include "tests/testing/scoped_temp_dir.h"
#include "worker/model/gguf/gguf_loader.h"
#include "worker/model/gguf/gguf_reader.h"
#include "worker/modelgen/builtin_tiny.h"

namespace smallmind::worker {
namespace {

using kernels::DType;

// A model small enough for a unit test whose every matrix row (64 or 128) splits into blocks.
GeneratorOptions SmallOptions(DType type) {
  GeneratorOptions o;
  o.name = "test-small";
  o.dim = 64;
  o.hidden_dim = 128;
  o.n_layers = 2;
  o.n_heads = 4;
  o.n_kv_heads = 2;
  o.vocab_size = 600;
  o.context_length = 256;
  o.weight_type = type;
  o.tied_embeddings = false;
  o.init = WeightInit::kGaussian;
  o.norm_noise = 0.1f;
  return o;
}

class ModelGeneratorTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = tmp_.path(); }

  std::string Write(const GeneratorOptions& o, const std::string& name) {
    const std::string path = (dir_ / name).string();
    auto summary = WriteGeneratedModel(o, path);
    EXPECT_TRUE(summary.ok()) << summary.status().ToString();
    return path;
  }

  testing::ScopedTempDir tmp_;
  std::filesystem::path dir_;
};

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<float> Dequantized(const TensorView& t) {
  std::vector<float> out(static_cast<size_t>(t.rows * t.cols));
  EXPECT_TRUE(kernels::DequantizeRef(t.type, t.data, out.data(), t.rows * t.cols));
  return out;
}

TEST_F(ModelGeneratorTest, EveryWeightTypeLoadsWithItsConfigTypesAndTokenizer) {
  for (DType type :
       {DType::kF32, DType::kF16, DType::kQ8_0, DType::kQ4_0, DType::kQ5_0, DType::kIQ4_NL}) {
    const GeneratorOptions o = SmallOptions(type);
    auto m = LoadGgufModel(Write(o, "small.gguf"));
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    const ModelConfig& c = m->llama.config;
    EXPECT_EQ(c.dim, 64);
    EXPECT_EQ(c.hidden_dim, 128);
    EXPECT_EQ(c.n_layers, 2);
    EXPECT_EQ(c.n_heads, 4);
    EXPECT_EQ(c.n_kv_heads, 2);
    EXPECT_EQ(c.vocab_size, 600);
    EXPECT_EQ(c.context_length, 256);
    EXPECT_EQ(c.rope_style, RopeStyle::kInterleaved);
    const Weights& w = m->llama.weights;
    EXPECT_EQ(w.token_embedding.type, type);  // quantized like the rest, as llama.cpp does
    EXPECT_EQ(w.classifier.type, type);
    EXPECT_NE(w.classifier.data, w.token_embedding.data);
    for (const LayerWeights& l : w.layers) {
      for (const TensorView* t : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w1, &l.w2, &l.w3}) {
        EXPECT_EQ(t->type, type);
      }
      EXPECT_EQ(l.attn_norm.type, DType::kF32);
      EXPECT_EQ(l.ffn_norm.type, DType::kF32);
    }
    EXPECT_EQ(w.final_norm.type, DType::kF32);
    ASSERT_EQ(m->tokenizer->vocab_size(), 600);
    EXPECT_EQ(m->tokenizer->bos_id(), 1);
    EXPECT_EQ(m->tokenizer->eos_id(), 2);
    const std::string text = "The little dog saw a big tree.";
    const std::vector<TokenId> ids = m->tokenizer->Encode(text, true);
    EXPECT_LT(ids.size(), text.size() / 2);  // merged pieces, not bytes
    std::string decoded;
    for (size_t i = 1; i < ids.size(); i++)
      m->tokenizer->AppendTokenBytes(ids[i - 1], ids[i], &decoded);
    EXPECT_EQ(decoded, text);
  }
}

TEST_F(ModelGeneratorTest, WritesLlamaCppMetadataKeys) {
  auto file = GgufFile::Open(Write(SmallOptions(DType::kQ4_0), "keys.gguf"));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const GgufFile& f = **file;
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.GetString("general.architecture").value(), "llama");
  EXPECT_EQ(f.GetString("general.name").value(), "test-small");
  EXPECT_EQ(f.GetU32("general.file_type").value(), 2u);  // LLAMA_FTYPE_MOSTLY_Q4_0
  EXPECT_EQ(f.GetU32("general.quantization_version").value(), 2u);
  EXPECT_EQ(f.Find("general.alignment"), nullptr);  // the default 32
  EXPECT_EQ(f.GetU32("llama.rope.dimension_count").value(), 16u);
  EXPECT_EQ(f.GetU32("llama.vocab_size").value(), 600u);
  EXPECT_EQ(f.GetF32("llama.rope.freq_base").value(), 10000.0f);
  EXPECT_EQ(f.GetString("tokenizer.ggml.model").value(), "llama");
  EXPECT_TRUE(f.GetBool("tokenizer.ggml.add_space_prefix").value());
  EXPECT_NE(f.FindTensor("output.weight"), nullptr);
}

TEST_F(ModelGeneratorTest, TheSameSeedGivesTheSameBytesAndAnotherSeedOthers) {
  GeneratorOptions o = SmallOptions(DType::kQ8_0);
  auto a = GenerateModelBuffer(o);
  auto b = GenerateModelBuffer(o);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(ReadFile(Write(o, "seeded.gguf")), *a);  // file and buffer agree
  o.seed++;
  auto c = GenerateModelBuffer(o);
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->size(), a->size());
  EXPECT_NE(*c, *a);
}

// Bytes of a tensor view (rows of its type).
std::vector<uint8_t> BytesOf(const TensorView& t) {
  const size_t n = kernels::RowBytes(*kernels::GetDTypeTraits(uint32_t(t.type)), t.cols) * t.rows;
  const auto* p = static_cast<const uint8_t*>(t.data);
  return {p, p + n};
}

TEST_F(ModelGeneratorTest, AGrownModelIsTheBaseThenCopiesWithScaledOutputMatrices) {
  const GeneratorOptions base = SmallOptions(DType::kQ8_0);
  GeneratorOptions grown = base;
  grown.grow_layers = 3;
  grown.grow_epsilon = 0.0f;
  auto b = LoadGgufModel(Write(base, "base.gguf"));
  auto g = LoadGgufModel(Write(grown, "grown.gguf"));
  ASSERT_TRUE(b.ok() && g.ok());
  ASSERT_EQ(g->llama.config.n_layers, 5);
  const Weights& bw = b->llama.weights;
  const Weights& gw = g->llama.weights;
  EXPECT_EQ(BytesOf(gw.token_embedding), BytesOf(bw.token_embedding));
  EXPECT_EQ(BytesOf(gw.classifier), BytesOf(bw.classifier));
  EXPECT_EQ(BytesOf(gw.final_norm), BytesOf(bw.final_norm));
  for (int l = 0; l < 5; ++l) {
    const LayerWeights& src = bw.layers[l % 2];
    const LayerWeights& got = gw.layers[l];
    for (auto [a, c] :
         {std::pair{&got.wq, &src.wq}, std::pair{&got.wk, &src.wk}, std::pair{&got.wv, &src.wv},
          std::pair{&got.w1, &src.w1}, std::pair{&got.w3, &src.w3},
          std::pair{&got.attn_norm, &src.attn_norm}, std::pair{&got.ffn_norm, &src.ffn_norm}}) {
      EXPECT_EQ(BytesOf(*a), BytesOf(*c)) << "layer " << l;
    }
    for (auto [a, c] : {std::pair{&got.wo, &src.wo}, std::pair{&got.w2, &src.w2}}) {
      if (l < 2) {
        EXPECT_EQ(BytesOf(*a), BytesOf(*c)) << "layer " << l;
      } else {
        for (float v : Dequantized(*a)) ASSERT_EQ(v, 0.0f) << "layer " << l;
      }
    }
  }
  // A positive epsilon scales the copies' output matrices (F32: exactly epsilon times).
  GeneratorOptions f32 = SmallOptions(DType::kF32);
  f32.grow_layers = 1;
  f32.grow_epsilon = 0.25f;
  auto s = LoadGgufModel(Write(f32, "scaled.gguf"));
  ASSERT_TRUE(s.ok());
  const std::vector<float> wo0 = Dequantized(s->llama.weights.layers[0].wo);
  const std::vector<float> wo2 = Dequantized(s->llama.weights.layers[2].wo);
  ASSERT_EQ(wo0.size(), wo2.size());
  for (size_t i = 0; i < wo0.size(); ++i) ASSERT_FLOAT_EQ(wo2[i], 0.25f * wo0[i]);
  GeneratorOptions bad = base;
  bad.grow_layers = 1;
  bad.grow_epsilon = -1.0f;
  EXPECT_FALSE(ValidateGeneratorOptions(bad).ok());
}

TEST_F(ModelGeneratorTest, QuantizedFilesHoldTheF32WeightsQuantizedByTheReferenceQuantizer) {
  auto f32 = LoadGgufModel(Write(SmallOptions(DType::kF32), "f32.gguf"));
  auto q8 = LoadGgufModel(Write(SmallOptions(DType::kQ8_0), "q8.gguf"));
  auto q4 = LoadGgufModel(Write(SmallOptions(DType::kQ4_0), "q4.gguf"));
  ASSERT_TRUE(f32.ok() && q8.ok() && q4.ok());
  const TensorView& ref = f32->llama.weights.layers[1].w2;
  const int64_t n = ref.rows * ref.cols;
  std::vector<kernels::BlockQ8_0> want_q8(n / 32);
  std::vector<kernels::BlockQ4_0> want_q4(n / 32);
  kernels::QuantizeQ8_0Ref(ref.f32(), want_q8.data(), n);
  kernels::QuantizeQ4_0Ref(ref.f32(), want_q4.data(), n);
  EXPECT_EQ(std::memcmp(q8->llama.weights.layers[1].w2.data, want_q8.data(), n / 32 * 34), 0);
  EXPECT_EQ(std::memcmp(q4->llama.weights.layers[1].w2.data, want_q4.data(), n / 32 * 18), 0);
  // And the F16 file holds the same values rounded to half precision.
  auto f16 = LoadGgufModel(Write(SmallOptions(DType::kF16), "f16.gguf"));
  ASSERT_TRUE(f16.ok());
  const std::vector<float> halves = Dequantized(f16->llama.weights.layers[1].w2);
  for (int64_t i = 0; i < n; i++) {
    ASSERT_EQ(halves[i], kernels::Fp16ToFp32(kernels::Fp32ToFp16(ref.f32()[i]))) << i;
  }
}

TEST_F(ModelGeneratorTest, GaussianWeightsHaveTheirFanInSpreadAndNormsSmallNoise) {
  auto m = LoadGgufModel(Write(SmallOptions(DType::kF32), "stats.gguf"));
  ASSERT_TRUE(m.ok());
  const TensorView& w2 = m->llama.weights.layers[0].w2;  // fan-in 128
  double sum = 0, sum_sq = 0;
  float max_abs = 0;
  const int64_t n = w2.rows * w2.cols;
  for (int64_t i = 0; i < n; i++) {
    sum += w2.f32()[i];
    sum_sq += double{w2.f32()[i]} * w2.f32()[i];
    max_abs = std::max(max_abs, std::fabs(w2.f32()[i]));
  }
  const double want_std = 1.0 / std::sqrt(128.0);
  EXPECT_NEAR(sum / n, 0.0, 0.05 * want_std);
  EXPECT_NEAR(std::sqrt(sum_sq / n), want_std, 0.03 * want_std);
  EXPECT_LE(max_abs, 3.47 * want_std);
  EXPECT_GT(max_abs, 2.5 * want_std);  // tails exist: not a uniform distribution
  std::set<float> distinct;
  for (int i = 0; i < 64; i++) {
    const float v = m->llama.weights.layers[1].attn_norm.f32()[i];
    EXPECT_NEAR(v, 1.0f, 0.35f);
    distinct.insert(v);
  }
  EXPECT_GT(distinct.size(), 60u);
}

TEST_F(ModelGeneratorTest, KeepsARowLengthThatIsNoWholeBlockInF32AndSaysSo) {
  GeneratorOptions o = SmallOptions(DType::kQ8_0);
  o.hidden_dim = 172;  // ffn_down rows have 172 elements
  auto summary = WriteGeneratedModel(o, (dir_ / "odd.gguf").string());
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  ASSERT_EQ(summary->notes.size(), 1u);
  EXPECT_EQ(summary->notes[0],
            "blk.*.ffn_down.weight kept F32: its row length 172 is not a multiple of the Q8_0 "
            "block (32)");
  EXPECT_EQ(summary->tensors_per_type.at("F32"), 2 * 3 + 1);  // 2 norms + ffn_down per layer
  EXPECT_EQ(summary->tensors_per_type.at("Q8_0"), 2 * 6 + 2);
  const uint64_t want_params =
      600 * 64 * 2 + 64 + 2 * (2 * 64 + 2 * 64 * 64 + 2 * 32 * 64 + 3 * 172 * 64);
  EXPECT_EQ(summary->parameter_count, want_params);
  EXPECT_EQ(summary->file_bytes, std::filesystem::file_size(dir_ / "odd.gguf"));
  auto m = LoadGgufModel((dir_ / "odd.gguf").string());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->llama.weights.layers[0].w2.type, DType::kF32);
  EXPECT_EQ(m->llama.weights.layers[0].w1.type, DType::kQ8_0);
}

TEST_F(ModelGeneratorTest, PresetsHaveTheDesignShapes) {
  auto tiny = GeneratorPreset("tiny");
  auto b110 = GeneratorPreset("bench-110M");
  auto b1 = GeneratorPreset("bench-1B");
  ASSERT_TRUE(tiny.ok() && b110.ok() && b1.ok());
  EXPECT_EQ(std::vector<int>({tiny->dim, tiny->hidden_dim, tiny->n_layers, tiny->n_heads,
                              tiny->n_kv_heads, tiny->vocab_size, tiny->context_length}),
            std::vector<int>({64, 172, 2, 4, 2, 259, 512}));
  EXPECT_EQ(std::vector<int>({b110->dim, b110->hidden_dim, b110->n_layers, b110->n_heads,
                              b110->n_kv_heads, b110->vocab_size, b110->context_length}),
            std::vector<int>({768, 2048, 12, 12, 12, 32000, 2048}));
  EXPECT_EQ(std::vector<int>({b1->dim, b1->hidden_dim, b1->n_layers, b1->n_heads, b1->n_kv_heads,
                              b1->vocab_size, b1->context_length}),
            std::vector<int>({2048, 5632, 22, 32, 4, 32000, 2048}));
  EXPECT_FALSE(b1->tied_embeddings);
  EXPECT_TRUE(ValidateGeneratorOptions(*b1).ok());
  EXPECT_EQ(GeneratorPreset("huge").status().message(),
            "unknown preset 'huge' (presets: tiny, bench-110M, bench-1B)");
}

TEST_F(ModelGeneratorTest, RejectsShapesTheLoaderCouldNotRead) {
  const auto rejects = [](auto change) {
    GeneratorOptions o;
    change(o);
    return !ValidateGeneratorOptions(o).ok() && !GenerateModelBuffer(o).ok();
  };
  EXPECT_TRUE(rejects([](GeneratorOptions& o) { o.n_heads = 3; }));     // 64 / 3
  EXPECT_TRUE(rejects([](GeneratorOptions& o) { o.n_kv_heads = 3; }));  // 4 / 3
  EXPECT_TRUE(rejects([](GeneratorOptions& o) { o.n_heads = 64; }));    // head size 1
  EXPECT_TRUE(rejects([](GeneratorOptions& o) { o.vocab_size = 100; }));
  EXPECT_TRUE(rejects([](GeneratorOptions& o) { o.n_layers = 0; }));
  EXPECT_TRUE(rejects([](GeneratorOptions& o) { o.weight_type = DType::kBF16; }));
  EXPECT_TRUE(rejects([](GeneratorOptions& o) { o.norm_noise = NAN; }));
  EXPECT_TRUE(rejects([](GeneratorOptions& o) { o.name.clear(); }));
  EXPECT_TRUE(rejects([](GeneratorOptions& o) { o.head_dim = 15; }));  // odd: RoPE rotates pairs
  EXPECT_TRUE(rejects([](GeneratorOptions& o) { o.head_dim = -2; }));
}

// --head-dim: heads wider than dim / heads, with wq / wo n_heads x head_dim and key_length written.
TEST_F(ModelGeneratorTest, AnExplicitHeadSizeShapesTheAttentionMatrices) {
  GeneratorOptions o;  // dim 64, 4 heads over 2
  o.n_heads = 3;       // 64 / 3 is no head size: the explicit one is
  o.n_kv_heads = 1;
  o.head_dim = 32;
  auto bytes = GenerateModelBuffer(o);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto f = GgufFile::FromBuffer(*bytes, "mem.gguf");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(*(*f)->GetInt("llama.attention.key_length"), 32);
  EXPECT_EQ(*(*f)->GetInt("llama.attention.value_length"), 32);
  EXPECT_EQ((*f)->FindTensor("blk.0.attn_q.weight")->n_rows(), 96);
  EXPECT_EQ((*f)->FindTensor("blk.0.attn_k.weight")->n_rows(), 32);
  EXPECT_EQ((*f)->FindTensor("blk.0.attn_output.weight")->row_length(), 96);
  // Without one, no key is written: existing files keep their bytes.
  auto plain = GenerateModelBuffer(GeneratorOptions{});
  ASSERT_TRUE(plain.ok());
  auto pf = GgufFile::FromBuffer(*plain, "mem.gguf");
  ASSERT_TRUE(pf.ok());
  EXPECT_EQ((*pf)->Find("llama.attention.key_length"), nullptr);
}

// K-quant rows are whole super-blocks of 256: dim 256, ffn 512.
GeneratorOptions KQuantOptions(DType type, int layers) {
  GeneratorOptions o = SmallOptions(type);
  o.dim = 256;
  o.hidden_dim = 512;
  o.n_layers = layers;
  o.vocab_size = 300;
  o.context_length = 128;
  return o;
}

TEST_F(ModelGeneratorTest, KQuantFilesLoadWithTheirTypesAndTheReferenceQuantizersBytes) {
  auto f32 = LoadGgufModel(Write(KQuantOptions(DType::kF32, 2), "kf32.gguf"));
  ASSERT_TRUE(f32.ok()) << f32.status().ToString();
  const TensorView& ref = f32->llama.weights.layers[1].w2;  // ffn_down: rows of 512
  const int64_t n = ref.rows * ref.cols;
  for (DType type : {DType::kQ4_K, DType::kQ5_K, DType::kQ6_K, DType::kIQ4_XS}) {
    auto m = LoadGgufModel(Write(KQuantOptions(type, 2), "k.gguf"));
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_EQ(m->llama.config.dim, 256);
    const Weights& w = m->llama.weights;
    EXPECT_EQ(w.token_embedding.type, type);
    EXPECT_EQ(w.classifier.type, type);
    for (const LayerWeights& l : w.layers) {
      for (const TensorView* t : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w1, &l.w2, &l.w3}) {
        EXPECT_EQ(t->type, type);
      }
      EXPECT_EQ(l.attn_norm.type, DType::kF32);
    }
    const std::vector<float> got = Dequantized(w.layers[1].w2);
    double err = 0.0, sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
      err += (double{got[i]} - ref.f32()[i]) * (double{got[i]} - ref.f32()[i]);
      sum += double{ref.f32()[i]} * ref.f32()[i];
    }
    // Near-normal weights: ~0.07 (Q4_K), ~0.035 (Q5_K) and ~0.017 (Q6_K) relative RMS error.
    EXPECT_LT(std::sqrt(err / sum), type == DType::kQ4_K || type == DType::kIQ4_XS ? 0.08
                                    : type == DType::kQ5_K                         ? 0.04
                                                                                   : 0.02);
    if (type == DType::kQ4_K) {
      std::vector<kernels::BlockQ4_K> want(n / 256);
      kernels::QuantizeQ4_KRef(ref.f32(), want.data(), n);
      EXPECT_EQ(std::memcmp(w.layers[1].w2.data, want.data(), want.size() * 144), 0);
    } else if (type == DType::kIQ4_XS) {
      std::vector<kernels::BlockIQ4_XS> want(n / 256);
      kernels::QuantizeIQ4_XSRef(ref.f32(), want.data(), n);
      EXPECT_EQ(std::memcmp(w.layers[1].w2.data, want.data(), want.size() * 136), 0);
    } else if (type == DType::kQ5_K) {
      std::vector<kernels::BlockQ5_K> want(n / 256);
      kernels::QuantizeQ5_KRef(ref.f32(), want.data(), n);
      EXPECT_EQ(std::memcmp(w.layers[1].w2.data, want.data(), want.size() * 176), 0);
    } else {
      std::vector<kernels::BlockQ6_K> want(n / 256);
      kernels::QuantizeQ6_KRef(ref.f32(), want.data(), n);
      EXPECT_EQ(std::memcmp(w.layers[1].w2.data, want.data(), want.size() * 210), 0);
    }
  }
  auto file = GgufFile::Open(Write(KQuantOptions(DType::kQ6_K, 1), "q6k.gguf"));
  ASSERT_TRUE(file.ok());
  EXPECT_EQ((*file)->GetU32("general.file_type").value(), 18u);  // LLAMA_FTYPE_MOSTLY_Q6_K
  file = GgufFile::Open(Write(KQuantOptions(DType::kQ5_K, 1), "q5k.gguf"));
  ASSERT_TRUE(file.ok());
  EXPECT_EQ((*file)->GetU32("general.file_type").value(), 16u);  // LLAMA_FTYPE_MOSTLY_Q5_K_S
}

TEST_F(ModelGeneratorTest, KMMixesStoreOutputAndTheMoreBitsLayersAttnVAndFfnDownInQ6_K) {
  // name, base type, llama.cpp's LLAMA_FTYPE_MOSTLY_Q4_K_M / MOSTLY_Q5_K_M
  for (const auto& [name, base, ftype] :
       {std::tuple{"Q4_K_M", DType::kQ4_K, 15u}, std::tuple{"q5_k_m", DType::kQ5_K, 17u}}) {
    GeneratorOptions o = KQuantOptions(DType::kF32, 8);
    ASSERT_TRUE(SetWeightScheme(name, &o).ok());
    EXPECT_EQ(o.weight_type, base);
    EXPECT_NE(o.mix, QuantMix::kNone);
    const std::string path = Write(o, std::string(name) + ".gguf");
    auto m = LoadGgufModel(path);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    const Weights& w = m->llama.weights;
    EXPECT_EQ(w.token_embedding.type, base) << name;
    EXPECT_EQ(w.classifier.type, DType::kQ6_K) << name;
    // llama.cpp's use_more_bits for 8 layers: l < 1, l >= 7, or (l - 1) % 3 == 2.
    const std::set<int> more_bits = {0, 3, 6, 7};
    for (int l = 0; l < 8; l++) {
      const DType want = more_bits.count(l) ? DType::kQ6_K : base;
      const LayerWeights& lw = w.layers[l];
      EXPECT_EQ(lw.wv.type, want) << name << " layer " << l;
      EXPECT_EQ(lw.w2.type, want) << name << " layer " << l;
      for (const TensorView* t : {&lw.wq, &lw.wk, &lw.wo, &lw.w1, &lw.w3}) {
        EXPECT_EQ(t->type, base) << name << " layer " << l;
      }
    }
    auto file = GgufFile::Open(path);
    ASSERT_TRUE(file.ok());
    EXPECT_EQ((*file)->GetU32("general.file_type").value(), ftype) << name;
  }
}

TEST_F(ModelGeneratorTest, Q5_KRowsThatAreNoWholeSuperBlockTakeQ5_1) {
  auto tiny = GeneratorPreset("tiny");
  ASSERT_TRUE(tiny.ok());
  for (const char* type : {"q5_k", "q5_k_m"}) {
    GeneratorOptions o = *tiny;
    ASSERT_TRUE(SetWeightScheme(type, &o).ok()) << type;
    ASSERT_TRUE(ValidateGeneratorOptions(o).ok()) << type;
    GgufBuildSummary summary;
    ASSERT_TRUE(GenerateModelBuffer(o, &summary).ok()) << type;
    EXPECT_NE(std::find(summary.notes.begin(), summary.notes.end(),
                        "blk.*.attn_q.weight stored Q5_1: its row length 64 is not a multiple of "
                        "the Q5_K block (256), llama.cpp's fallback type"),
              summary.notes.end())
        << type;
  }
  GeneratorOptions o = KQuantOptions(DType::kQ8_0, 1);
  o.mix = QuantMix::kQ4_K_M;
  EXPECT_EQ(ValidateGeneratorOptions(o).message(), "this mix needs the Q4_K weight type");
  EXPECT_EQ(SetWeightScheme("q9_k", &o).message(),
            "weight type 'q9_k' is not one of f32, f16, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl, "
            "q2_k, q3_k, q4_k, q5_k, q6_k, iq4_xs, mxfp4, or a mix: q4_k_m, q5_k_m, q2_k, q3_k_s, "
            "q3_k_m, mxfp4_moe");
}

// llama.cpp's MXFP4_MOE (the type gpt-oss's files ship in): the 3-D expert tensors MXFP4, the
// classifier Q6_K (Q8_0 on rows that are no multiple of 256), every other matrix Q8_0, the router
// F32 (llama.cpp's quantizer never touches ffn_gate_inp); general.file_type 38. --type mxfp4 alone
// stores every matrix MXFP4.
TEST_F(ModelGeneratorTest, Mxfp4MoeMixStoresTheExpertsMxfp4AndTheRestQ8_0) {
  GeneratorOptions o = SmallOptions(DType::kF32);
  o.architecture = "qwen3moe";
  o.n_experts = 4;
  o.n_experts_used = 2;
  ASSERT_TRUE(SetWeightScheme("mxfp4_moe", &o).ok());
  EXPECT_EQ(o.weight_type, DType::kMXFP4);
  const std::string path = Write(o, "mxfp4_moe.gguf");
  auto m = LoadGgufModel(path);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Weights& w = m->llama.weights;
  EXPECT_EQ(w.classifier.type, DType::kQ8_0);  // the mix's Q6_K, fallen back on 64-long rows
  EXPECT_EQ(w.token_embedding.type, DType::kQ8_0);
  for (const LayerWeights& lw : w.layers) {
    for (const TensorView* t : {&lw.wq, &lw.wk, &lw.wv, &lw.wo}) EXPECT_EQ(t->type, DType::kQ8_0);
    EXPECT_EQ(lw.router.type, DType::kF32);
    for (const ExpertsView* e : {&lw.gate_exps, &lw.up_exps, &lw.down_exps}) {
      ASSERT_EQ(e->count(), 4);
      EXPECT_EQ((*e)[3].type, DType::kMXFP4);
    }
  }
  auto file = GgufFile::Open(path);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ((*file)->GetU32("general.file_type").value(), 38u);
  ASSERT_TRUE(SetWeightScheme("mxfp4", &o).ok());
  auto all = LoadGgufModel(Write(o, "mxfp4.gguf"));
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->llama.weights.layers[1].wq.type, DType::kMXFP4);
  EXPECT_EQ(all->llama.weights.layers[1].down_exps[0].type, DType::kMXFP4);
  EXPECT_EQ(all->llama.weights.classifier.type, DType::kMXFP4);
}

// llama.cpp's Q2_K, Q3_K_S and Q3_K_M mixes on 16 layers of 4 query heads over 2 KV heads
// (n_gqa 2): the types llama_tensor_get_type gives each matrix.
TEST_F(ModelGeneratorTest, LowBitMixesStoreEachMatrixInLlamaCppsType) {
  struct Want {
    const char* name;
    uint32_t ftype;
    DType base, wv_first, wv_rest, wo, w2_first, w2_rest;
  };
  for (const Want& c : {Want{"q2_k", 10, DType::kQ2_K, DType::kQ3_K, DType::kQ3_K, DType::kQ3_K,
                             DType::kQ3_K, DType::kQ3_K},
                        Want{"q3_k_s", 11, DType::kQ3_K, DType::kQ3_K, DType::kQ3_K, DType::kQ3_K,
                             DType::kQ3_K, DType::kQ3_K},
                        Want{"q3_k_m", 12, DType::kQ3_K, DType::kQ5_K, DType::kQ4_K, DType::kQ4_K,
                             DType::kQ5_K, DType::kQ4_K}}) {
    GeneratorOptions o = KQuantOptions(DType::kF32, 16);
    ASSERT_TRUE(SetWeightScheme(c.name, &o).ok());
    EXPECT_EQ(o.weight_type, c.base);
    const std::string path = Write(o, std::string(c.name) + ".gguf");
    auto m = LoadGgufModel(path);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    const Weights& w = m->llama.weights;
    EXPECT_EQ(w.classifier.type, DType::kQ6_K) << c.name;  // output.weight, or a tied token_embd
    for (int l = 0; l < 16; l++) {
      const LayerWeights& lw = w.layers[l];
      // Q3_K_M: attn_v Q5_K in layers 0-1; ffn_down Q5_K below 16 / 16 = layer 1.
      EXPECT_EQ(lw.wv.type, l < 2 ? c.wv_first : c.wv_rest) << c.name << " layer " << l;
      EXPECT_EQ(lw.w2.type, l < 1 ? c.w2_first : c.w2_rest) << c.name << " layer " << l;
      EXPECT_EQ(lw.wo.type, c.wo) << c.name << " layer " << l;
      for (const TensorView* t : {&lw.wq, &lw.wk, &lw.w1, &lw.w3}) {
        EXPECT_EQ(t->type, c.base) << c.name << " layer " << l;
      }
    }
    auto file = GgufFile::Open(path);
    ASSERT_TRUE(file.ok());
    EXPECT_EQ((*file)->GetU32("general.file_type").value(), c.ftype) << c.name;
  }
}

// A Qwen2-0.5B-wide model (dim 896 = 3.5 x 256, ffn 4864 = 19 x 256) in q4_k_m: every matrix whose
// rows are dim long takes llama.cpp's fallback (Q4_K -> Q5_0, the mix's Q6_K -> Q8_0), ffn_down's
// 4864-long rows keep the mix's types; q6_k and iq4_xs fall back to Q8_0 and IQ4_NL.
TEST_F(ModelGeneratorTest, RowsThatAreNoWholeSuperBlockTakeLlamaCppsFallbackTypes) {
  GeneratorOptions o = SmallOptions(DType::kF32);
  o.dim = 896;
  o.hidden_dim = 4864;
  o.n_layers = 8;
  o.n_heads = 14;
  o.n_kv_heads = 2;
  o.vocab_size = 300;
  ASSERT_TRUE(SetWeightScheme("q4_k_m", &o).ok());
  ASSERT_TRUE(ValidateGeneratorOptions(o).ok());
  const std::string path = (dir_ / "q4_k_m-896.gguf").string();
  auto summary = WriteGeneratedModel(o, path);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  auto m = LoadGgufModel(path);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Weights& w = m->llama.weights;
  EXPECT_EQ(w.token_embedding.type, DType::kQ5_0);
  EXPECT_EQ(w.classifier.type, DType::kQ8_0);  // the mix's Q6_K, fallen back
  const std::set<int> more_bits = {0, 3, 6, 7};
  for (int l = 0; l < 8; l++) {
    const LayerWeights& lw = w.layers[l];
    for (const TensorView* t : {&lw.wq, &lw.wk, &lw.wo, &lw.w1, &lw.w3}) {
      EXPECT_EQ(t->type, DType::kQ5_0) << "layer " << l;
    }
    EXPECT_EQ(lw.wv.type, more_bits.count(l) ? DType::kQ8_0 : DType::kQ5_0) << "layer " << l;
    EXPECT_EQ(lw.w2.type, more_bits.count(l) ? DType::kQ6_K : DType::kQ4_K) << "layer " << l;
  }
  EXPECT_NE(std::find(summary->notes.begin(), summary->notes.end(),
                      "blk.*.attn_q.weight stored Q5_0: its row length 896 is not a multiple of "
                      "the Q4_K block (256), llama.cpp's fallback type"),
            summary->notes.end());
  // The fallback rows hold the reference quantizer's bytes of the same F32 weights.
  GeneratorOptions f = o;
  f.mix = QuantMix::kNone;
  f.weight_type = DType::kF32;
  auto ref = LoadGgufModel(Write(f, "f32-896.gguf"));
  ASSERT_TRUE(ref.ok());
  const TensorView& q = w.layers[1].wq;
  const int64_t n = q.rows * q.cols;
  std::vector<kernels::BlockQ5_0> want(n / 32);
  kernels::QuantizeQ5_0Ref(static_cast<const float*>(ref->llama.weights.layers[1].wq.data),
                           want.data(), n);
  EXPECT_EQ(std::memcmp(q.data, want.data(), want.size() * sizeof(want[0])), 0);
  for (const auto& [type, fallback] :
       {std::pair{"q6_k", DType::kQ8_0}, std::pair{"iq4_xs", DType::kIQ4_NL}}) {
    GeneratorOptions g = o;
    g.n_layers = 1;
    ASSERT_TRUE(SetWeightScheme(type, &g).ok());
    auto mg = LoadGgufModel(Write(g, std::string(type) + "-896.gguf"));
    ASSERT_TRUE(mg.ok()) << mg.status().ToString();
    EXPECT_EQ(mg->llama.weights.layers[0].wq.type, fallback) << type;
    EXPECT_NE(mg->llama.weights.layers[0].w2.type, fallback) << type;  // 4864 = 19 x 256
  }
}

TEST(BuiltinTinyGgufTest, IsTheTinyPresetAndItsTokenizerEncodesLikeTheByteLevelOne) {
  const GgufModel m = MakeBuiltinTiny();
  auto preset = GeneratorPreset("tiny");
  ASSERT_TRUE(preset.ok());
  auto bytes = GenerateModelBuffer(*preset);
  ASSERT_TRUE(bytes.ok());
  ASSERT_EQ(m.llama.weights.storage.size(), bytes->size());
  EXPECT_EQ(std::memcmp(m.llama.weights.storage.data(), bytes->data(), bytes->size()), 0);
  const std::unique_ptr<SpmTokenizer> want = MakeByteLevelTokenizer();
  std::string all_bytes;
  for (int b = 0; b < 256; b++) all_bytes.push_back(static_cast<char>(b));
  for (const std::string& text : {std::string(), std::string(" "), std::string("Hello, world!"),
                                  std::string("  two\nlines\t\xC3\xA9\xE2\x82\xAC"), all_bytes}) {
    for (bool bos : {true, false}) {
      EXPECT_EQ(m.tokenizer->Encode(text, bos), want->Encode(text, bos)) << text;
    }
  }
  EXPECT_EQ(m.tokenizer->vocab_size(), 259);
  EXPECT_TRUE(m.tokenizer->add_bos_default());
  EXPECT_EQ(m.tokenizer->bos_id(), want->bos_id());
  EXPECT_EQ(m.tokenizer->eos_id(), want->eos_id());
}

}  // namespace
}  // namespace smallmind::worker
