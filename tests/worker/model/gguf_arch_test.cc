// The GGUF loader through the architecture descriptions (worker/model/arch/): Llama 3.x rope_freqs
// and linear rope scaling are read, and every metadata key or tensor the description does not
// implement refuses the file naming it (issue 42 item 5: no silent misreads). Files are generated
// models, copied key by key and tensor by tensor into a GgufWriter with one thing added.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

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

std::unique_ptr<GgufFile> Parse(const std::vector<uint8_t>& bytes) {
  auto f = GgufFile::FromBuffer(bytes, "mem.gguf");
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? std::move(f).value() : nullptr;
}

// The scalar or array `v` (of the types the generator writes) as a value to write.
GgufWriteValue Copy(const GgufValue& v) {
  if (!v.is_array()) {
    switch (v.type()) {
      case GgufType::kString: return GgufWriteValue::String(*v.AsString());
      case GgufType::kBool: return GgufWriteValue::Bool(*v.AsBool());
      case GgufType::kF32: return GgufWriteValue::F32(static_cast<float>(*v.AsDouble()));
      case GgufType::kI32: return GgufWriteValue::I32(static_cast<int32_t>(*v.AsInt64()));
      default: return GgufWriteValue::U32(static_cast<uint32_t>(*v.AsUint64()));
    }
  }
  if (v.elem_type() == GgufType::kString) {
    const std::vector<std::string> s(v.strings().begin(), v.strings().end());
    return GgufWriteValue::StringArray(s);
  }
  if (v.elem_type() == GgufType::kF32) {
    std::vector<float> f;
    for (uint64_t i = 0; i < v.size(); i++)
      f.push_back(static_cast<float>(*v.FixedAt(i).AsDouble()));
    return GgufWriteValue::Array<float>(f);
  }
  std::vector<int32_t> n;
  for (uint64_t i = 0; i < v.size(); i++)
    n.push_back(static_cast<int32_t>(*v.FixedAt(i).AsInt64()));
  return GgufWriteValue::Array<int32_t>(n);
}

// `src` rewritten with `edit` applied to a writer holding its metadata (tensors follow).
std::vector<uint8_t> Rewritten(const std::vector<uint8_t>& src,
                               const std::function<void(GgufWriter&)>& edit,
                               const std::string& drop_key = "") {
  std::unique_ptr<GgufFile> f = Parse(src);
  GgufWriter w;
  for (const GgufKeyValue& kv : f->metadata()) {
    if (kv.key != drop_key) w.Add(kv.key, Copy(kv.value));
  }
  edit(w);
  for (const GgufTensorInfo& t : f->tensors()) {
    const uint8_t* p = f->TensorData(t);
    w.AddTensor(t.name, t.type, std::span<const int64_t>(t.dims.data(), t.n_dims),
                std::vector<uint8_t>(p, p + t.n_bytes));
  }
  auto out = w.WriteBuffer();
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? *out : std::vector<uint8_t>();
}

// The status of reading the config and mapping the weights of `bytes`.
shared::Status LoadStatus(const std::vector<uint8_t>& bytes) {
  std::unique_ptr<GgufFile> f = Parse(bytes);
  if (f == nullptr) return shared::Internal("unparsable");
  SM_ASSIGN_OR_RETURN(ModelConfig c, GgufModelConfig(*f));
  WeightStorage storage = WeightStorage::Allocate(f->file_size());
  std::memcpy(storage.mutable_data(), f->bytes().data(), f->file_size());
  SM_ASSIGN_OR_RETURN(Weights w, MapGgufWeights(*f, c, std::move(storage)));
  return ValidateLlamaWeights(c, w);
}

void ExpectRefusedNaming(const std::vector<uint8_t>& bytes, const std::string& name) {
  const shared::Status s = LoadStatus(bytes);
  ASSERT_FALSE(s.ok()) << name;
  EXPECT_NE(s.message().find("'" + name + "'"), std::string::npos) << s.message();
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

TEST(GgufArchTest, TensorsTheArchitectureDoesNotUseAreRefusedNamingThem) {
  auto bytes = GenerateModelBuffer(GeneratorOptions{});
  ASSERT_TRUE(bytes.ok());
  const std::vector<float> ones(16, 1.0f);
  std::vector<uint8_t> data(ones.size() * sizeof(float));
  std::memcpy(data.data(), ones.data(), data.size());
  const int64_t dims[] = {16};
  // qwen3's per-head q norm in a llama file, and a qwen2 bias in a llama file.
  for (const char* name : {"blk.0.attn_q_norm.weight", "blk.1.attn_k.bias"}) {
    ExpectRefusedNaming(
        Rewritten(*bytes,
                  [&](GgufWriter& w) { w.AddTensor(name, kernels::DType::kF32, dims, data); }),
        name);
  }
}

TEST(GgufArchTest, UnsupportedArchitecturesAreRefusedListingTheSupportedOnes) {
  auto bytes = GenerateModelBuffer(GeneratorOptions{});
  ASSERT_TRUE(bytes.ok());
  const auto gemma = Rewritten(
      *bytes, [](GgufWriter& w) { w.AddString("general.architecture", "gemma2"); },
      "general.architecture");
  auto c = GgufModelConfig(*Parse(gemma));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("'gemma2' is not supported (supported: llama, qwen2)"),
            std::string::npos)
      << c.status().message();
}

}  // namespace
}  // namespace smallmind::worker
