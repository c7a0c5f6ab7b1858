// ModelConfig: the hyperparameters of a loaded model, parsed once by a loader (llama2.c, GGUF,
// builtin). Plain data; thread-compatible.
#pragma once

#include <string>

#include "worker/types/pooling_type.h"

namespace smallmind::worker {

enum class RopeStyle {
  kInterleaved,  // llama2.c / GGUF llama: rotate pairs (2i, 2i+1)
  kNeox,         // qwen2 / GPT-NeoX: rotate pairs (i, i + head_dim/2)
};

// The activation of the gated feed-forward: act(w1 . x) * (w3 . x).
enum class FfnActivation {
  kSilu,      // SwiGLU (llama, qwen, ...)
  kGeluTanh,  // GeGLU with GELU's tanh approximation, as llama.cpp's half table (gemma)
  // gpt-oss's clamped SwiGLU (llama.cpp's swiglu_oai, alpha kSwiGluOaiAlpha, limit
  // kSwiGluOaiLimit): min(gate, limit) * sigmoid(alpha * that) * (clamp(up, +-limit) + 1)
  kSwiGluOai,
};
inline constexpr float kSwiGluOaiAlpha = 1.702f;
inline constexpr float kSwiGluOaiLimit = 7.0f;

// How a mixture of experts' router turns its scores into the k weights.
enum class ExpertGating {
  kSoftmaxTopK,  // softmax over every expert, then the top k (qwen3moe, Mixtral)
  kTopKSoftmax,  // the top k scores, then the softmax over those k (gpt-oss)
};

struct ModelConfig {
  std::string architecture = "llama";
  int dim = 0;         // embedding width
  int hidden_dim = 0;  // FFN inner width
  int n_layers = 0;
  int n_heads = 0;     // query heads
  int n_kv_heads = 0;  // key/value heads (GQA when < n_heads)
  // Width of each head's q, k and v (GGUF {arch}.attention.key_length); 0: dim / n_heads. Qwen3
  // and Gemma heads are wider than dim / n_heads, so q and the attention output are q_dim() wide.
  int head_size = 0;
  int vocab_size = 0;
  int context_length = 0;  // maximum positions per sequence
  float rms_norm_eps = 1e-5f;
  float rope_theta = 10000.0f;
  // Linear RoPE scaling: positions are multiplied by this (1 / rope.scaling.factor); 1: none.
  float rope_freq_scale = 1.0f;
  // YaRN ({arch}.rope.scaling.type yarn, gpt-oss; llama.cpp's rope_yarn): with factor
  // 1 / rope_freq_scale, pair i of the d rotated dims turns at theta_i * (s (1 - r_i) + r_i) with
  // theta_i the unscaled frequency and r_i = 1 - clamp((i - lo) / max(0.001, hi - lo), 0, 1) the
  // ramp between the correction dims lo / hi of rope_yarn_orig_context (beta_fast 32, beta_slow
  // 1), and cos and sin times (1 + 0.1 ln factor) (the attention temperature) and
  // rope_attn_factor. false: linear scaling only.
  bool rope_yarn = false;
  int rope_yarn_orig_context = 0;  // rope.scaling.original_context_length
  // Partial rotary (GGUF {arch}.rope.dimension_count < head_dim(), Phi-4-mini): the first
  // rope_dims dims of each q and k head rotate, the rest pass through; 0: the whole head.
  int rope_dims = 0;
  // llama.cpp's rope attn_factor ({arch}.rope.scaling.attn_factor; Phi-3 LongRoPE's
  // sqrt(1 + ln(context / original context) / ln(original context))): RoPE's cos and sin are
  // multiplied by it, so every q.k score by its square; 1: none.
  float rope_attn_factor = 1.0f;
  // Layers without RoPE: n > 0, layer l rotates nothing when (l + 1) % n == 0 (SmolLM3's every
  // 4th layer, llama.cpp's n_no_rope_layer_step); 0: every layer rotates.
  int no_rope_period = 0;
  RopeStyle rope_style = RopeStyle::kInterleaved;
  // Sliding-window attention: a windowed layer's query at position p sees (p - sliding_window, p]
  // (llama.cpp's LLAMA_SWA_TYPE_STANDARD); 0: no layer is windowed.
  int sliding_window = 0;
  // Which layers are windowed when sliding_window > 0: 0, every layer (Mistral style); n, layer l
  // is unless l % n == n - 1 (llama.cpp's set_swa_pattern: gemma2 n = 2, gemma3 n = 6).
  int swa_period = 0;
  // RoPE of the windowed layers (llama.cpp's rope_freq_base_train_swa / scale_swa): 0, the same
  // as the other layers' rope_theta / rope_freq_scale (gemma3: base 10000, unscaled).
  float rope_theta_swa = 0.0f;
  float rope_freq_scale_swa = 0.0f;
  FfnActivation ffn_activation = FfnActivation::kSilu;
  float embedding_scale =
      0.0f;  // token embeddings are multiplied by this (gemma: sqrt(dim)); 0: not
  // Queries are multiplied by this after RoPE, and the q.k dots then not divided by
  // sqrt(head_dim) (llama.cpp's f_attention_scale: gemma 1 / sqrt(head_dim), its 27B
  // 1 / sqrt(dim / n_heads)); 0: not, the dots are divided by sqrt(head_dim).
  float query_scale = 0.0f;
  float attn_softcap = 0.0f;   // attention logit soft-capping (gemma2); 0: none
  float final_softcap = 0.0f;  // final logit soft-capping: cap * tanh(logit / cap); 0: none
  // Mixture of experts (docs/moe.md): every layer's FFN is n_experts experts of expert_ffn_dim
  // inner width, of which a router picks n_experts_used per token (expert_gating); 0: dense.
  int n_experts = 0;
  int n_experts_used = 0;
  int expert_ffn_dim = 0;
  // Whether the top-k router weights are divided by their sum (llama.cpp's norm_w).
  bool expert_weights_norm = false;
  ExpertGating expert_gating = ExpertGating::kSoftmaxTopK;
  // A shared expert beside the routed ones (qwen2moe): every token also runs a dense SwiGLU FFN
  // of this inner width (LayerWeights w1 / w3 / w2), its output scaled by
  // sigmoid(shexp_gate . x) and added to the routed experts' sum; 0: none.
  int shared_expert_ffn_dim = 0;

  // An encoder (BERT, docs/embeddings.md): learned position and token-type embeddings and a
  // LayerNorm before the first layer, post-LayerNorm blocks with biases, bidirectional attention
  // over one input and an ungated GELU feed-forward; no RoPE, no output norm, no classifier. Its
  // inputs run whole in one step and keep no KV cache (worker/engine/forward_bert.h).
  bool encoder = false;
  float layer_norm_eps = 1e-12f;  // encoder: the LayerNorms' epsilon
  // How an embedding is pooled from the last hidden states (GGUF {arch}.pooling_type): an
  // encoder's mean or [CLS], a decoder embedder's last token (Qwen3-Embedding); kNone: the file
  // names none (a generation model; /v1/embeddings then needs an explicit last-token request).
  PoolingType pooling = PoolingType::kNone;
  // Values the classification head gives per input (pooling kRank: a reranker's cls.weight /
  // cls.output.weight, docs/embeddings.md); 0 without a head. The first is the relevance score.
  int rank_outputs = 0;

  // q and k are RMS-normed over each token's whole row (q_dim, kv_dim wide: olmoe) rather than
  // per head (qwen3), when LayerWeights q_norm / k_norm are present.
  bool qk_norm_whole_row = false;

  bool moe() const { return n_experts > 0; }
  int head_dim() const { return head_size > 0 ? head_size : dim / n_heads; }
  int q_dim() const { return n_heads * head_dim(); }  // queries and attention output, per token
  int kv_dim() const { return n_kv_heads * head_dim(); }
  int kv_group() const { return n_heads / n_kv_heads; }  // query heads per KV head
  int rotary_dims() const { return rope_dims > 0 ? rope_dims : head_dim(); }
  bool LayerRotates(int layer) const {
    return no_rope_period <= 0 || (layer + 1) % no_rope_period != 0;
  }
  // The attention window of `layer` (AttentionArgs::window): 0, the whole causal context.
  int LayerWindow(int layer) const {
    if (sliding_window <= 0) return 0;
    return swa_period == 0 || layer % swa_period != swa_period - 1 ? sliding_window : 0;
  }
  // The RoPE base and linear scale of `layer`.
  float LayerRopeTheta(int layer) const {
    return LayerWindow(layer) > 0 && rope_theta_swa > 0 ? rope_theta_swa : rope_theta;
  }
  float LayerRopeFreqScale(int layer) const {
    return LayerWindow(layer) > 0 && rope_freq_scale_swa > 0 ? rope_freq_scale_swa
                                                             : rope_freq_scale;
  }
  // Positions every layer sees: sliding_window when every layer is windowed, else 0 (all).
  int AllLayersWindow() const {
    for (int l = 0; l < n_layers; l++) {
      if (LayerWindow(l) == 0) return 0;
    }
    return sliding_window;
  }
};

}  // namespace smallmind::worker
