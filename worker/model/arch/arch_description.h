// ArchDescription: what one model family (a GGUF `general.architecture`) computes beyond the llama
// skeleton every supported family shares (token embedding, pre-norm attention and SwiGLU blocks,
// final norm, classifier): its RoPE pair layout, which optional tensors it may carry and which
// `{arch}.*` metadata it may set. The GGUF loader reads a file through its family's description
// into a ModelConfig and Weights, and the one forward pass (worker/engine/forward_llama.cc) acts on
// those; nothing else branches on the family's name. Immutable constants; thread-safe.
//
// Adding a family: one file here (`<family>_arch.cc`) defining its description and one line in
// arch_description.cc. A family that needs a piece the forward pass lacks (another norm,
// activation, attention variant) adds a field here, the piece in the forward pass, and sets the
// field.
#pragma once

#include <span>
#include <string_view>

#include "worker/types/model_config.h"

namespace smallmind::worker {

struct ArchDescription {
  std::string_view name;  // general.architecture
  RopeStyle rope_style = RopeStyle::kInterleaved;
  bool qkv_bias = false;    // attn_q/attn_k/attn_v.bias may be present (added after the matmuls)
  bool rope_freqs = false;  // rope_freqs.weight may be present (per-pair frequency divisors)
  bool rope_scaling_linear = false;  // {arch}.rope.scaling.type may be "linear"
  // attn_q_norm / attn_k_norm.weight ([head_dim]) are required: each head's q and k RMS-normed
  // before RoPE (qwen3)
  bool qk_norm = false;
  // With qk_norm: the norms are [q_dim] / [kv_dim], each token's whole q and k row normed at once
  // (olmoe; ModelConfig::qk_norm_whole_row) instead of each head.
  bool qk_norm_whole_row = false;
  // post_attention_norm / post_ffw_norm.weight ([dim]) are required: the attention output and the
  // FFN output are each RMS-normed before they are added to the residual stream (gemma)
  bool post_norms = false;
  FfnActivation ffn_activation = FfnActivation::kSilu;
  bool embedding_scale = false;  // token embeddings are multiplied by sqrt(dim) (gemma)
  // Queries are scaled by 1 / sqrt(head size) after RoPE instead of the scores divided by it
  // (ModelConfig::query_scale; llama.cpp's f_attention_scale, gemma's query_pre_attn_scalar), by
  // 1 / sqrt(dim / heads) in a file of exactly wide_query_scale_layers layers (gemma's 27B).
  bool query_scale = false;
  int wide_query_scale_layers = 0;
  // {arch}.attn_logit_softcapping is read: every layer soft-caps its attention scores, with this
  // cap when the key is absent (gemma2: 50). 0: the family has none and the key is refused.
  float attn_softcap = 0.0f;
  // {arch}.final_logit_softcapping is read (the logits soft-capped when it is > 0), with this
  // value when the key is absent (gemma2: 30, gemma3: 0).
  bool final_softcap_key = false;
  float final_softcap = 0.0f;
  // Sliding-window layers ({arch}.attention.sliding_window, .sliding_window_pattern): -1, the
  // family has none (the keys are refused); else the pattern period when the file names none
  // (ModelConfig::swa_period: gemma2 2, gemma3 6).
  int swa_period = -1;
  // The window when the file has no sliding_window key (gemma2: 4096); 0: none then (gemma3).
  int default_window = 0;
  // The windowed layers' RoPE base when {arch}.rope.freq_base_swa is absent, and those layers are
  // not rope-scaled (gemma3: 10000); 0: they rotate as the other layers (the key still read).
  float swa_rope_theta = 0.0f;
  // Mixture of experts (docs/moe.md): {arch}.expert_count > 0 replaces every layer's ffn_gate /
  // ffn_up / ffn_down by a router (ffn_gate_inp) and 3-D expert tensors (ffn_*_exps). kNever: the
  // family has no experts (expert_count must be 0); kRequired: it always has them.
  enum class Experts { kNever, kAllowed, kRequired };
  Experts experts = Experts::kNever;
  // Whether the top-k router weights are divided by their sum (llama.cpp's norm_w for the family;
  // {arch}.expert_weights_norm, when present, must agree).
  bool expert_weights_norm = false;
  ExpertGating expert_gating = ExpertGating::kSoftmaxTopK;
  // {arch}.expert_feed_forward_length sizes the experts; false: the family's llama.cpp graph
  // reads no such key (olmoe: feed_forward_length), and a file whose key says otherwise is
  // refused.
  bool expert_ffn_key = true;
  // A shared expert per layer (qwen2moe): ffn_gate_shexp / ffn_up_shexp / ffn_down_shexp (a dense
  // SwiGLU FFN of {arch}.expert_shared_feed_forward_length, absent: feed_forward_length) and
  // ffn_gate_inp_shexp ([dim]) are required; ModelConfig::shared_expert_ffn_dim.
  bool shared_expert = false;
  // gpt-oss's pieces: attn_output.bias and attn_sinks.weight ([n_heads]) are required; the
  // router and every expert matrix carry biases (ffn_gate_inp.bias, ffn_{gate,up,down}_exps.bias),
  // required; {arch}.rope.scaling.type may be "yarn" (ModelConfig::rope_yarn).
  bool attn_output_bias = false;
  bool attn_sinks = false;
  bool expert_biases = false;
  bool rope_scaling_yarn = false;
  // The name of the FFN's pre-norm weight in the file: "ffn_norm" (llama's), or gpt-oss's
  // "post_attention_norm" (the same norm, named for where it sits).
  std::string_view ffn_norm_name = "ffn_norm";
  // attn_qkv.weight ([q_dim + 2 kv_dim, dim]) may stand for attn_q/k/v: its row ranges are the
  // three matrices, viewed in place (phi3).
  bool fused_qkv = false;
  // ffn_up.weight is [2 hidden, dim]: the gate's rows, then the up rows; no ffn_gate (phi3).
  bool fused_gate_up = false;
  // LongRoPE: rope_factors_long / rope_factors_short.weight ([rotary dims / 2]) may be present,
  // one chosen by context length against rope.scaling.original_context_length, and
  // rope.scaling.attn_factor scales RoPE's cos and sin (phi3).
  bool longrope = false;
  // rope.dimension_count may be less than the head size: partial rotary (phi3, Phi-4-mini).
  bool partial_rotary = false;
  // n > 0: layer l has no RoPE when (l + 1) % n == 0 (smollm3: 4); 0: every layer rotates.
  int no_rope_period = 0;
  // An encoder (ModelConfig::encoder, BERT): its own tensor set (position and token-type
  // embeddings, LayerNorms with biases, biased projections, ungated FFN) read by the loader's
  // encoder mapping, {arch}.attention.layer_norm_epsilon for the norms and
  // {arch}.attention.causal, which must be false; none of the llama skeleton's norms or classifier.
  bool encoder = false;
  // `{arch}.` keys (suffixes) this family may carry beyond gguf_arch_keys.cc's common list: ones
  // it reads, or ones llama.cpp ignores for it (its description says why).
  std::span<const std::string_view> extra_keys = {};
};

// The descriptions of the families smallmind runs, one per file of this folder.
extern const ArchDescription kLlamaArch;     // llama_arch.cc
extern const ArchDescription kQwen2Arch;     // qwen2_arch.cc
extern const ArchDescription kQwen3Arch;     // qwen3_arch.cc
extern const ArchDescription kQwen3MoeArch;  // qwen3moe_arch.cc
extern const ArchDescription kPhi3Arch;      // phi3_arch.cc
extern const ArchDescription kSmolLm3Arch;   // smollm3_arch.cc
extern const ArchDescription kGemma2Arch;    // gemma2_arch.cc
extern const ArchDescription kGemma3Arch;    // gemma3_arch.cc
extern const ArchDescription kBertArch;      // bert_arch.cc
extern const ArchDescription kGptOssArch;    // gpt_oss_arch.cc
extern const ArchDescription kQwen2MoeArch;  // qwen2moe_arch.cc
extern const ArchDescription kOlmoeArch;     // olmoe_arch.cc

// Every supported family, in the order error messages list them.
std::span<const ArchDescription* const> SupportedArchs();

// The family named `name`, or nullptr when smallmind does not run it.
const ArchDescription* FindArch(std::string_view name);

// "llama, qwen2": the supported names, for error messages and `smallmind info`.
std::string_view SupportedArchNames();

}  // namespace smallmind::worker
