// Model generator: llama-shaped GGUF files with seeded pseudo-random weights (the presets of
// DESIGN.md §7 or any shape), weights in any type the builder writes (or llama.cpp's Q4_K_M,
// Q5_K_M, Q2_K, Q3_K_S and Q3_K_M mixes) and a synthetic SentencePiece vocabulary in the metadata.
// Used by smallmind-modelgen, builtin:tiny and tests. Stateless functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/dtype.h"
#include "shared/status.h"
#include "worker/modelgen/llama_gguf_builder.h"
#include "worker/modelgen/quant_mix.h"
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
  // general.architecture: "llama"; "qwen3" (NeoX RoPE and per-head q/k RMSNorm weights,
  // attn_q_norm / attn_k_norm); "qwen3moe" (qwen3 with experts); "phi3" (NeoX RoPE, fused
  // attn_qkv and gate/up ffn_up, the same draws as llama's separate matrices); "smollm3" (llama's
  // tensors, no RoPE in every 4th layer); "gemma2" (NeoX RoPE,
  // post_attention_norm / post_ffw_norm, soft-capping, every other layer windowed; tied
  // embeddings only) or "gemma3" (gemma2's tensors plus q/k norms, five windowed layers to one
  // global, no attention soft-capping).
  std::string architecture = "llama";
  // "gpt-oss" (NeoX RoPE with YaRN, biases on q/k/v/o, attention sinks, every other layer
  // windowed, experts with biases picked by top-k then softmax, the clamped SwiGLU; its FFN norm
  // named post_attention_norm; untied; needs experts). "qwen2moe" (NeoX RoPE, q/k/v biases,
  // routed experts not renormalised and a shared expert per layer: ffn_{gate,up,down}_shexp of
  // shared_expert_ffn_dim and its sigmoid gate ffn_gate_inp_shexp; needs experts). "olmoe" (NeoX
  // RoPE, q/k RMSNorm over whole rows, attn_q_norm [q_dim] / attn_k_norm [kv_dim], experts not
  // renormalised; needs experts).
  // attention.sliding_window (gemma, gpt-oss); nullopt: the family's converter default (gemma2
  // 4096, gemma3 none, gpt-oss 128).
  std::optional<int> window;
  // gpt-oss: rope.scaling.type yarn with this rope.scaling.factor (and
  // rope.scaling.original_context_length rope_orig_context, or context_length); 0: no scaling.
  float yarn_factor = 0.0f;
  // attn_logit_softcapping (gemma2 only) and final_logit_softcapping; nullopt: gemma2's 50 / 30,
  // gemma3's none.
  std::optional<float> attn_softcap;
  std::optional<float> final_softcap;
  // Mixture of experts (0: a dense FFN; qwen3moe needs > 0): every layer's FFN is n_experts
  // experts of hidden_dim inner width (ffn_gate_exps / ffn_up_exps / ffn_down_exps) and an F32
  // router (ffn_gate_inp, unquantized as llama.cpp's quantizer keeps it) picking n_experts_used.
  int n_experts = 0;
  int n_experts_used = 0;
  // qwen2moe's shared expert width (expert_shared_feed_forward_length); 0: hidden_dim.
  int shared_expert_ffn_dim = 0;
  int dim = 64;
  int hidden_dim = 172;
  int n_layers = 2;
  int n_heads = 4;
  int n_kv_heads = 2;
  // Width of each head (written as attention.key_length / value_length); 0: dim / n_heads.
  int head_dim = 0;
  int vocab_size = kByteVocabSize;
  int context_length = 512;
  float rms_norm_eps = 1e-5f;
  float rope_theta = 10000.0f;
  kernels::DType weight_type = kernels::DType::kF32;  // attention, FFN and output matrices
  // One of llama.cpp's mixes (quant_mix.h: Q4_K_M, Q5_K_M, Q2_K, Q3_K_S, Q3_K_M; needs
  // weight_type its base type): output.weight and some attn_v / ffn_down / attn_output matrices
  // in other types, the rest weight_type. kNone: every matrix weight_type.
  QuantMix mix = QuantMix::kNone;
  // token_embd's type; nullopt: weight_type, as llama.cpp's converter stores it.
  std::optional<kernels::DType> embedding_type;
  bool tied_embeddings = true;  // no output.weight: the classifier is token_embd
  // A Llama 3.1/3.2 rope_freqs.weight (llama3_rope.h, Llama 3.1's scaling values) for the head.
  bool llama3_rope_freqs = false;
  // rope.dimension_count: the rotated dims of each head (phi3 may rotate fewer than the head
  // size: partial rotary); 0: the whole head.
  int rope_dims = 0;
  // phi3 LongRoPE: rope_factors_long/short.weight and rope.scaling.attn_factor
  // (longrope_factors.h) for context_length over rope_orig_context.
  bool longrope = false;
  // rope.scaling.original_context_length (phi3, gpt-oss's yarn); 0: not written.
  int rope_orig_context = 0;
  // attention.sliding_window (phi3, whose loaders read it and apply none); 0: not written.
  int sliding_window = 0;
  // tokenizer.chat_template (the Jinja source, "" = none) and the chat tokens of the vocabulary
  // (chat_tokens.h): BOS / EOS spelled bos_token / eos_token ("" = <s> / </s>), and as control
  // tokens every special_tokens entry plus the template's `<|name|>` literals.
  std::string chat_template;
  std::string bos_token;
  std::string eos_token;
  std::vector<std::string> special_tokens;
  WeightInit init = WeightInit::kUniform;
  // Spreads s: token_embd (and so a tied classifier) embedding_spread; output.weight
  // classifier_gain / sqrt(dim), which makes logits of spread ~classifier_gain on a unit-RMS
  // final state; every other matrix 1 / sqrt(fan_in), which keeps each matmul's output at the
  // scale of its input. Norm weights are 1 + a draw of spread norm_noise.
  float embedding_spread = 0.5f;
  float classifier_gain = 1.0f;
  float norm_noise = 0.0f;
  uint64_t seed = kDefaultGeneratorSeed;
  // "Grown deep" (a speculation benchmark's target, docs/speculation.md): n_layers layers as
  // above, then grow_layers more, extra layer j a copy of layer j % n_layers whose attn_output and
  // ffn_down are scaled by grow_epsilon. With epsilon 0 every extra layer adds exactly zero to the
  // residual stream, so the file computes the n_layers model's function at the read cost of all
  // its layers (and the n_layers model, same seed and type, is its draft); a larger epsilon makes
  // the two agree less. The first n_layers layers are the base model's bit for bit.
  int grow_layers = 0;
  float grow_epsilon = 0.0f;
};

// "tiny" (builtin:tiny's shape and weights: dim 64, ffn 172, 2 layers, 4 heads, 2 KV heads,
// vocab 259 byte-level, context 512, uniform init, tied), "bench-110M" (dim 768, 12 layers, 12
// heads, ffn 2048, vocab 32000, context 2048) and "bench-1B" (dim 2048, 22 layers, 32 heads, 4
// KV heads, ffn 5632, vocab 32000, context 2048); the bench presets use near-normal weights, an
// untied output.weight and noisy norms. Unknown names are InvalidArgument listing the presets.
shared::Result<GeneratorOptions> GeneratorPreset(std::string_view preset);

// Sets weight_type (and mix) from a --type name: ParseWeightType's names or a mix's
// (QuantMixFromName: q4_k_m, q5_k_m, q2_k, q3_k_s, q3_k_m, mxfp4_moe; "q2_k" is llama.cpp's Q2_K
// mix).
shared::Status SetWeightScheme(std::string_view name, GeneratorOptions* options);

// Shapes in the ranges the GGUF loader accepts (heads dividing dim, an even head size), a
// vocabulary size MakeSyntheticSpmVocab can build, writable types, row lengths (dim, ffn) that
// are whole blocks of 256 for K-quant types, finite non-negative spreads.
shared::Status ValidateGeneratorOptions(const GeneratorOptions& options);

// The hyperparameters a loader reads back from the generated file (n_layers + grow_layers layers).
ModelConfig GeneratorConfig(const GeneratorOptions& options);

// Writes the model to `path` (through a temporary file and a rename), generating one tensor at a
// time, so memory holds at most one encoded tensor plus one F32 row. The same options give the
// same bytes on every machine (integer PRNG, seekable: each tensor's values depend only on the
// seed and the tensor, not on the order tensors are written).
// `progress` (may be empty) hears of every tensor written (GgufWriter::Progress).
shared::Result<GgufBuildSummary> WriteGeneratedModel(const GeneratorOptions& options,
                                                     const std::string& path,
                                                     const GgufWriter::Progress& progress = {});
// The same file's bytes in memory.
shared::Result<std::vector<uint8_t>> GenerateModelBuffer(const GeneratorOptions& options,
                                                         GgufBuildSummary* summary = nullptr);

}  // namespace smallmind::worker
