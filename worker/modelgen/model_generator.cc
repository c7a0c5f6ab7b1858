// Weight values come from one SplitMix64 stream per seed, addressed by draw index (SplitMix64's
// state after i steps is seed + i * gamma, so any draw is computed directly). Matrices take their
// draws in llama2.c array order (token embedding, then wq of every layer, wk, wv, wo, w1, w2, w3,
// then the separate classifier), which keeps builtin:tiny's historical weights bit for bit; norm
// weights draw from a second stream so their noise never shifts the matrices.
#include "worker/modelgen/model_generator.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <memory>
#include <optional>
#include <utility>

#include "kernels/quant_blocks.h"
#include "worker/modelgen/llama3_rope.h"

namespace smallmind::worker {

using kernels::DType;

namespace {

constexpr uint64_t kGamma = 0x9e3779b97f4a7c15ULL;
constexpr uint64_t kNormStreamTag = 0x6e6f726d73ULL;  // "norms"
constexpr int64_t kMaxDim = 1 << 16;                  // the GGUF loader's bounds
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxContext = 1 << 24;

uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Draw i (from 0) of SplitMix64 seeded with `seed`.
uint64_t DrawBits(uint64_t seed, uint64_t i) { return Mix(seed + (i + 1) * kGamma); }

// Uniform in [-1, 1), exactly representable (24 random bits).
float UniformSigned(uint64_t bits) { return static_cast<float>(bits >> 40) * 0x1p-23f - 1.0f; }

// Irwin-Hall: four 16-bit uniforms in (0, 1) sum to mean 2, variance 1/3; rescaled to unit
// variance it is within a few percent of a normal's shape, bounded at +-2 sqrt(3).
float NearNormal(uint64_t bits) {
  float sum = 0.0f;
  for (int k = 0; k < 4; k++) {
    sum += (static_cast<float>((bits >> (16 * k)) & 0xffffu) + 0.5f) * 0x1p-16f;
  }
  return (sum - 2.0f) * 1.7320508f;
}

float Draw(WeightInit init, uint64_t seed, uint64_t i) {
  const uint64_t bits = DrawBits(seed, i);
  return init == WeightInit::kUniform ? UniformSigned(bits) : NearNormal(bits);
}

// Row r of a [rows, cols] matrix whose element (r, c) is spread * draw(offset + r * cols + c).
LlamaGgufBuilder::RowSource DrawnRows(const GeneratorOptions& o, uint64_t offset, int64_t cols,
                                      float spread) {
  return [init = o.init, seed = o.seed, offset, cols, spread](int64_t r, std::span<float> out) {
    const uint64_t base = offset + static_cast<uint64_t>(r * cols);
    for (int64_t c = 0; c < cols; c++) out[c] = spread * Draw(init, seed, base + c);
  };
}

// A norm weight vector: 1 + norm_noise * draw, from the norm stream at `offset`.
LlamaGgufBuilder::RowSource NormRow(const GeneratorOptions& o, uint64_t offset) {
  return [init = o.init, seed = Mix(o.seed ^ kNormStreamTag), noise = o.norm_noise, offset](
             int64_t, std::span<float> out) {
    for (size_t c = 0; c < out.size(); c++) {
      out[c] = noise == 0.0f ? 1.0f : 1.0f + noise * Draw(init, seed, offset + c);
    }
  };
}

float FanInSpread(int64_t fan_in) { return 1.0f / std::sqrt(static_cast<float>(fan_in)); }

// First draw of each matrix family (layer 0), in llama2.c order; layer l adds l * its size.
struct DrawLayout {
  uint64_t wq, wk, wv, wo, w1, w2, w3, output;
};

DrawLayout LayoutOf(const ModelConfig& c) {
  const uint64_t n = c.n_layers, dim = c.dim, kv = c.kv_dim(), hidden = c.hidden_dim;
  DrawLayout d{};
  d.wq = uint64_t(c.vocab_size) * dim;  // after the token embedding
  d.wk = d.wq + n * dim * dim;
  d.wv = d.wk + n * kv * dim;
  d.wo = d.wv + n * kv * dim;
  d.w1 = d.wo + n * dim * dim;
  d.w2 = d.w1 + n * hidden * dim;
  d.w3 = d.w2 + n * dim * hidden;
  d.output = d.w3 + n * hidden * dim;
  return d;
}

// llama.cpp's use_more_bits(i_layer, n_layers): the layers whose attn_v and ffn_down Q4_K_M and
// Q5_K_M store in Q6_K.
bool UsesMoreBits(int layer, int n_layers) {
  return layer < n_layers / 8 || layer >= 7 * n_layers / 8 || (layer - n_layers / 8) % 3 == 2;
}

void AddLayer(const GeneratorOptions& o, const ModelConfig& c, const DrawLayout& d, int l,
              LlamaGgufBuilder* b) {
  const int64_t dim = c.dim, kv = c.kv_dim(), hidden = c.hidden_dim;
  const uint64_t ul = static_cast<uint64_t>(l);
  const std::string p = "blk." + std::to_string(l) + ".";
  const DType t = o.weight_type;
  const DType more = o.k_m_mix && UsesMoreBits(l, c.n_layers) ? DType::kQ6_K : t;
  const auto matrix = [&](const char* name, int64_t rows, int64_t cols, uint64_t first,
                          DType type) {
    b->AddMatrix(p + name, rows, cols, type,
                 DrawnRows(o, first + ul * rows * cols, cols, FanInSpread(cols)));
  };
  b->AddVector(p + "attn_norm.weight", dim, NormRow(o, ul * dim));
  matrix("attn_q.weight", dim, dim, d.wq, t);
  matrix("attn_k.weight", kv, dim, d.wk, t);
  matrix("attn_v.weight", kv, dim, d.wv, more);
  matrix("attn_output.weight", dim, dim, d.wo, t);
  b->AddVector(p + "ffn_norm.weight", dim, NormRow(o, (c.n_layers + ul) * dim));
  matrix("ffn_gate.weight", hidden, dim, d.w1, t);
  matrix("ffn_up.weight", hidden, dim, d.w3, t);
  matrix("ffn_down.weight", dim, hidden, d.w2, more);
}

// rope_freqs.weight of a Llama 3.1/3.2 file: F32 divisors, one per RoPE pair of a head.
void AddLlama3RopeFreqs(const ModelConfig& c, LlamaGgufBuilder* b) {
  b->AddVector(
      "rope_freqs.weight", c.head_dim() / 2,
      [factors = Llama3RopeFactors(c.head_dim(), c.rope_theta)](int64_t, std::span<float> out) {
        std::copy(factors.begin(), factors.end(), out.begin());
      });
}

void AddTensors(const GeneratorOptions& o, LlamaGgufBuilder* b) {
  const ModelConfig c = GeneratorConfig(o);
  const DrawLayout d = LayoutOf(c);
  b->AddMatrix("token_embd.weight", c.vocab_size, c.dim, o.embedding_type.value_or(o.weight_type),
               DrawnRows(o, 0, c.dim, o.embedding_spread));
  for (int l = 0; l < c.n_layers; l++) AddLayer(o, c, d, l, b);
  b->AddVector("output_norm.weight", c.dim, NormRow(o, uint64_t(2) * c.n_layers * c.dim));
  if (!o.tied_embeddings) {
    b->AddMatrix("output.weight", c.vocab_size, c.dim, o.k_m_mix ? DType::kQ6_K : o.weight_type,
                 DrawnRows(o, d.output, c.dim, o.classifier_gain * FanInSpread(c.dim)));
  }
  if (o.llama3_rope_freqs) AddLlama3RopeFreqs(c, b);
}

shared::Status CheckRange(const char* what, int64_t v, int64_t lo, int64_t hi) {
  if (v >= lo && v <= hi) return shared::Status::Ok();
  return shared::InvalidArgument(std::string(what) + " " + std::to_string(v) + " is outside [" +
                                 std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

bool IsKQuant(DType t) {
  return t == DType::kQ4_K || t == DType::kQ5_K || t == DType::kQ6_K || t == DType::kIQ4_XS;
}

// K-quant rows are whole super-blocks: refuse a row length that is not here, naming the option,
// before anything is generated (the builder would refuse the first such matrix too).
shared::Status CheckKQuantRows(const GeneratorOptions& o) {
  const bool k =
      IsKQuant(o.weight_type) || o.k_m_mix || (o.embedding_type && IsKQuant(*o.embedding_type));
  if (!k) return shared::Status::Ok();
  for (auto [what, cols] :
       {std::pair{"dim", o.dim}, std::pair{"ffn (hidden) size", o.hidden_dim}}) {
    if (cols % kernels::kQkK == 0) continue;
    return shared::InvalidArgument(
        std::string(
            "K-quant types (q4_k, q5_k, q6_k, q4_k_m, q5_k_m, iq4_xs) store rows in blocks of ") +
        std::to_string(kernels::kQkK) + " elements, but the row length " + std::to_string(cols) +
        " (" + what + ") is not a multiple of " + std::to_string(kernels::kQkK) +
        ": use q8_0 / q4_0 or a " + what + " that is");
  }
  return shared::Status::Ok();
}

shared::Status CheckSpread(const char* what, float v, bool zero_ok) {
  if (std::isfinite(v) && (v > 0.0f || (zero_ok && v == 0.0f))) return shared::Status::Ok();
  return shared::InvalidArgument(std::string(what) + " " + std::to_string(v) + " must be " +
                                 (zero_ok ? "finite and >= 0" : "finite and > 0"));
}

// general.file_type: llama.cpp's MOSTLY_Q4_K_M / MOSTLY_Q5_K_M for the mixes, else the weight
// type's.
std::optional<uint32_t> LlamaFileTypeOf(const GeneratorOptions& o) {
  constexpr uint32_t kMostlyQ4KM = 15, kMostlyQ5KM = 17;
  if (!o.k_m_mix) return std::nullopt;
  return o.weight_type == DType::kQ5_K ? kMostlyQ5KM : kMostlyQ4KM;
}

}  // namespace

shared::Result<GeneratorOptions> GeneratorPreset(std::string_view preset) {
  GeneratorOptions o;  // the defaults are the tiny preset
  if (preset == "tiny") return o;
  const bool small = preset == "bench-110M";
  if (!small && preset != "bench-1B") {
    return shared::InvalidArgument("unknown preset '" + std::string(preset) +
                                   "' (presets: tiny, bench-110M, bench-1B)");
  }
  o.name = "smallmind-" + std::string(preset);
  o.dim = small ? 768 : 2048;
  o.hidden_dim = small ? 2048 : 5632;
  o.n_layers = small ? 12 : 22;
  o.n_heads = small ? 12 : 32;
  o.n_kv_heads = small ? 12 : 4;
  o.vocab_size = 32000;
  o.context_length = 2048;
  o.tied_embeddings = false;
  o.init = WeightInit::kGaussian;
  // Unit-RMS embeddings match the scale every block adds to the residual stream; a logit spread
  // of 4 over 32000 tokens leaves a clear but not one-hot top-1; 10% norm noise breaks the
  // symmetry of all-ones norms without changing scales.
  o.embedding_spread = 1.0f;
  o.classifier_gain = 4.0f;
  o.norm_noise = 0.1f;
  return o;
}

shared::Status SetWeightScheme(std::string_view name, GeneratorOptions* o) {
  std::string lower(name);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  o->k_m_mix = lower == "q4_k_m" || lower == "q5_k_m";
  if (o->k_m_mix) {
    o->weight_type = lower == "q5_k_m" ? DType::kQ5_K : DType::kQ4_K;
    return shared::Status::Ok();
  }
  shared::Result<DType> type = ParseWeightType(name);
  if (!type.ok()) return shared::InvalidArgument(type.status().message() + ", q4_k_m or q5_k_m");
  o->weight_type = *type;
  return shared::Status::Ok();
}

shared::Status ValidateGeneratorOptions(const GeneratorOptions& o) {
  if (o.name.empty()) return shared::InvalidArgument("the model name must not be empty");
  SM_RETURN_IF_ERROR(CheckRange("dim", o.dim, 1, kMaxDim));
  SM_RETURN_IF_ERROR(CheckRange("ffn (hidden) size", o.hidden_dim, 1, 4 * kMaxDim));
  SM_RETURN_IF_ERROR(CheckRange("layers", o.n_layers, 1, kMaxLayers));
  SM_RETURN_IF_ERROR(CheckRange("heads", o.n_heads, 1, o.dim));
  SM_RETURN_IF_ERROR(CheckRange("kv heads", o.n_kv_heads, 1, o.n_heads));
  SM_RETURN_IF_ERROR(CheckRange("context", o.context_length, 1, kMaxContext));
  SM_RETURN_IF_ERROR(CheckRange("vocab", o.vocab_size, kByteVocabSize, kMaxSyntheticVocabSize));
  if (o.dim % o.n_heads != 0 || o.n_heads % o.n_kv_heads != 0 || (o.dim / o.n_heads) % 2 != 0) {
    return shared::InvalidArgument(
        "heads must divide dim into an even head size and kv heads must divide heads (dim " +
        std::to_string(o.dim) + ", heads " + std::to_string(o.n_heads) + ", kv heads " +
        std::to_string(o.n_kv_heads) + ")");
  }
  if (!IsWritableWeightType(o.weight_type) ||
      (o.embedding_type && !IsWritableWeightType(*o.embedding_type))) {
    return shared::InvalidArgument(
        "weight types must be F32, F16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K or IQ4_XS");
  }
  if (o.k_m_mix && o.weight_type != DType::kQ4_K && o.weight_type != DType::kQ5_K) {
    return shared::InvalidArgument("the _k_m mixes need the Q4_K or Q5_K weight type");
  }
  SM_RETURN_IF_ERROR(CheckKQuantRows(o));
  SM_RETURN_IF_ERROR(CheckSpread("rms_norm_eps", o.rms_norm_eps, false));
  SM_RETURN_IF_ERROR(CheckSpread("rope_theta", o.rope_theta, false));
  SM_RETURN_IF_ERROR(CheckSpread("embedding_spread", o.embedding_spread, false));
  SM_RETURN_IF_ERROR(CheckSpread("classifier_gain", o.classifier_gain, false));
  return CheckSpread("norm_noise", o.norm_noise, true);
}

ModelConfig GeneratorConfig(const GeneratorOptions& o) {
  ModelConfig c;
  c.architecture = "llama";
  c.dim = o.dim;
  c.hidden_dim = o.hidden_dim;
  c.n_layers = o.n_layers;
  c.n_heads = o.n_heads;
  c.n_kv_heads = o.n_kv_heads;
  c.vocab_size = o.vocab_size;
  c.context_length = o.context_length;
  c.rms_norm_eps = o.rms_norm_eps;
  c.rope_theta = o.rope_theta;
  c.rope_style = RopeStyle::kInterleaved;
  return c;
}

namespace {

// The whole generated model in a builder, ready to write (tensors are produced while writing).
shared::Result<std::unique_ptr<LlamaGgufBuilder>> GeneratedBuilder(const GeneratorOptions& o) {
  SM_RETURN_IF_ERROR(ValidateGeneratorOptions(o));
  SM_ASSIGN_OR_RETURN(SpmVocab vocab, MakeSyntheticSpmVocab(o.vocab_size));
  auto builder = std::make_unique<LlamaGgufBuilder>(GeneratorConfig(o), o.name, o.weight_type,
                                                    LlamaFileTypeOf(o));
  builder->AddSpmVocab(vocab);
  AddTensors(o, builder.get());
  return builder;
}

}  // namespace

shared::Result<GgufBuildSummary> WriteGeneratedModel(const GeneratorOptions& o,
                                                     const std::string& path,
                                                     const GgufWriter::Progress& progress) {
  SM_ASSIGN_OR_RETURN(std::unique_ptr<LlamaGgufBuilder> builder, GeneratedBuilder(o));
  return builder->WriteFile(path, progress);
}

shared::Result<std::vector<uint8_t>> GenerateModelBuffer(const GeneratorOptions& o,
                                                         GgufBuildSummary* summary) {
  SM_ASSIGN_OR_RETURN(std::unique_ptr<LlamaGgufBuilder> builder, GeneratedBuilder(o));
  return builder->WriteBuffer(summary);
}

}  // namespace smallmind::worker
