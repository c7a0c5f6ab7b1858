// Model generator: llama-shaped GGUF files with seeded pseudo-random weights (the presets of
// DESIGN.md §7 or any shape), weights in F32/F16/Q8_0/Q4_0/Q4_K/Q5_K/Q6_K (or the Q4_K_M / Q5_K_M
// mixes) and a synthetic SentencePiece vocabulary in the metadata. Used by smallmind-modelgen,
// builtin:tiny and tests. Stateless functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/dtype.h"
#include "shared/status.h"
#include "worker/modelgen/llama_gguf_builder.h"
#include "worker/modelgen/synthetic_vocab.h"
#include "worker/types/model_config.h"

namespace smallmind::worker {

inline constexpr uint64_t kDefaultGeneratorSeed = 0x736d616c6c6d696eULL;  // "smallmin"

// How a weight with spread s is drawn.
enum class WeightInit {
  kUniform,   // uniform in [-s, s)
  kGaussian,  // near-normal with standard deviation s: a sum of 4 uniforms, so |x| < 3.47 s
};

struct GeneratorOptions {
  std::string name = "smallmind-tiny";  // general.name
  int dim = 64;
  int hidden_dim = 172;
  int n_layers = 2;
  int n_heads = 4;
  int n_kv_heads = 2;
  int vocab_size = kByteVocabSize;
  int context_length = 512;
  float rms_norm_eps = 1e-5f;
  float rope_theta = 10000.0f;
  kernels::DType weight_type = kernels::DType::kF32;  // attention, FFN and output matrices
  // llama.cpp's Q4_K_M / Q5_K_M mix (needs weight_type Q4_K / Q5_K): output.weight, and attn_v /
  // ffn_down of the layers its use_more_bits picks (the first and last eighth, every third one
  // between), in Q6_K; the rest weight_type.
  bool k_m_mix = false;
  // token_embd's type; nullopt: weight_type, as llama.cpp's converter stores it.
  std::optional<kernels::DType> embedding_type;
  bool tied_embeddings = true;  // no output.weight: the classifier is token_embd
  // A Llama 3.1/3.2 rope_freqs.weight (llama3_rope.h, Llama 3.1's scaling values) for the head.
  bool llama3_rope_freqs = false;
  WeightInit init = WeightInit::kUniform;
  // Spreads s: token_embd (and so a tied classifier) embedding_spread; output.weight
  // classifier_gain / sqrt(dim), which makes logits of spread ~classifier_gain on a unit-RMS
  // final state; every other matrix 1 / sqrt(fan_in), which keeps each matmul's output at the
  // scale of its input. Norm weights are 1 + a draw of spread norm_noise.
  float embedding_spread = 0.5f;
  float classifier_gain = 1.0f;
  float norm_noise = 0.0f;
  uint64_t seed = kDefaultGeneratorSeed;
};

// "tiny" (builtin:tiny's shape and weights: dim 64, ffn 172, 2 layers, 4 heads, 2 KV heads,
// vocab 259 byte-level, context 512, uniform init, tied), "bench-110M" (dim 768, 12 layers, 12
// heads, ffn 2048, vocab 32000, context 2048) and "bench-1B" (dim 2048, 22 layers, 32 heads, 4
// KV heads, ffn 5632, vocab 32000, context 2048); the bench presets use near-normal weights, an
// untied output.weight and noisy norms. Unknown names are InvalidArgument listing the presets.
shared::Result<GeneratorOptions> GeneratorPreset(std::string_view preset);

// Sets weight_type (and k_m_mix) from a --type name: ParseWeightType's names, "q4_k_m" or
// "q5_k_m".
shared::Status SetWeightScheme(std::string_view name, GeneratorOptions* options);

// Shapes in the ranges the GGUF loader accepts (heads dividing dim, an even head size), a
// vocabulary size MakeSyntheticSpmVocab can build, writable types, row lengths (dim, ffn) that
// are whole blocks of 256 for K-quant types, finite non-negative spreads.
shared::Status ValidateGeneratorOptions(const GeneratorOptions& options);

// The hyperparameters a loader reads back from the generated file.
ModelConfig GeneratorConfig(const GeneratorOptions& options);

// Writes the model to `path` (through a temporary file and a rename), generating one tensor at a
// time, so memory holds at most one encoded tensor plus one F32 row. The same options give the
// same bytes on every machine (integer PRNG, seekable: each tensor's values depend only on the
// seed and the tensor, not on the order tensors are written).
shared::Result<GgufBuildSummary> WriteGeneratedModel(const GeneratorOptions& options,
                                                     const std::string& path);
// The same file's bytes in memory.
shared::Result<std::vector<uint8_t>> GenerateModelBuffer(const GeneratorOptions& options,
                                                         GgufBuildSummary* summary = nullptr);

}  // namespace smallmind::worker
