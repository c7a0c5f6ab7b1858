#include "worker/model/builtin_tiny.h"

#include <cmath>
#include <cstdint>
#include <utility>

#include "worker/model/llama2c_reader.h"

namespace smallmind::worker {
namespace {

constexpr uint64_t kSeed = 0x736d616c6c6d696eULL;  // "smallmin"

// SplitMix64: a tiny integer generator whose output is the same on every platform (std's
// distributions are not).
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1), exactly representable (24 random bits).
  float UniformSigned() { return static_cast<float>(Next() >> 40) * 0x1p-23f - 1.0f; }

 private:
  uint64_t state_;
};

// Fills `count` floats uniform in [-bound, bound).
void FillUniform(SplitMix64& rng, float bound, int64_t count, float* out) {
  for (int64_t i = 0; i < count; i++) out[i] = bound * rng.UniformSigned();
}

void FillOnes(int64_t count, float* out) {
  for (int64_t i = 0; i < count; i++) out[i] = 1.0f;
}

// Writes the weights in llama2.c array order (see llama2c_reader.cc), shared classifier. Matrices
// are uniform with bound 1/sqrt(fan_in), so every matmul keeps activations near unit scale; norms
// are 1.
void FillLlama2cOrder(const ModelConfig& c, SplitMix64& rng, float* p) {
  const int64_t n = c.n_layers, dim = c.dim, hidden = c.hidden_dim, kv_dim = c.kv_dim();
  const float dim_bound = 1.0f / std::sqrt(static_cast<float>(dim));
  const float hidden_bound = 1.0f / std::sqrt(static_cast<float>(hidden));
  const auto uniform = [&](float bound, int64_t count) {
    FillUniform(rng, bound, count, p);
    p += count;
  };
  const auto ones = [&](int64_t count) {
    FillOnes(count, p);
    p += count;
  };
  // Token embedding, also the classifier: bound 0.5 gives logits of standard deviation ~2.3 on a
  // unit-RMS final state, peaked enough for greedy decoding yet not one-hot.
  uniform(0.5f, c.vocab_size * dim);
  ones(n * dim);                            // attention norms
  uniform(dim_bound, n * dim * dim);        // wq
  uniform(dim_bound, n * kv_dim * dim);     // wk
  uniform(dim_bound, n * kv_dim * dim);     // wv
  uniform(dim_bound, n * dim * dim);        // wo
  ones(n * dim);                            // FFN norms
  uniform(dim_bound, n * hidden * dim);     // w1
  uniform(hidden_bound, n * dim * hidden);  // w2
  uniform(dim_bound, n * hidden * dim);     // w3
  ones(dim);                                // final norm
}

}  // namespace

ModelConfig BuiltinTinyConfig() {
  ModelConfig c;
  c.architecture = "llama";
  c.dim = 64;
  c.hidden_dim = 172;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.vocab_size = 259;  // <unk>, <s>, </s>, <0x00>..<0xFF>
  c.context_length = 512;
  c.rms_norm_eps = 1e-5f;
  c.rope_theta = 10000.0f;
  c.rope_style = RopeStyle::kInterleaved;
  return c;
}

LlamaModel MakeBuiltinTinyModel() {
  const ModelConfig config = BuiltinTinyConfig();
  const int64_t floats = Llama2cCoreFloats(config);
  WeightStorage storage = WeightStorage::Allocate(static_cast<size_t>(floats) * sizeof(float));
  SplitMix64 rng(kSeed);
  FillLlama2cOrder(config, rng, reinterpret_cast<float*>(storage.mutable_data()));
  Weights weights = MapLlama2cWeights(config, std::move(storage), 0, ClassifierLayout::kShared);
  const shared::Status valid = ValidateLlamaWeights(config, weights);
  SM_CHECK(valid.ok()) << valid.ToString();
  return LlamaModel{config, std::move(weights)};
}

}  // namespace smallmind::worker
