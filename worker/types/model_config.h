// ModelConfig: the hyperparameters of a loaded model, parsed once by a loader (llama2.c, GGUF,
// builtin). Plain data; thread-compatible.
#pragma once

#include <string>

namespace smallmind::worker {

enum class RopeStyle {
  kInterleaved,  // llama2.c / GGUF llama: rotate pairs (2i, 2i+1)
  kNeox,         // qwen2 / GPT-NeoX: rotate pairs (i, i + head_dim/2)
};

struct ModelConfig {
  std::string architecture = "llama";
  int dim = 0;         // embedding width
  int hidden_dim = 0;  // FFN inner width
  int n_layers = 0;
  int n_heads = 0;     // query heads
  int n_kv_heads = 0;  // key/value heads (GQA when < n_heads)
  int vocab_size = 0;
  int context_length = 0;  // maximum positions per sequence
  float rms_norm_eps = 1e-5f;
  float rope_theta = 10000.0f;
  // Linear RoPE scaling: positions are multiplied by this (1 / rope.scaling.factor); 1: none.
  float rope_freq_scale = 1.0f;
  RopeStyle rope_style = RopeStyle::kInterleaved;

  int head_dim() const { return dim / n_heads; }
  int kv_dim() const { return n_kv_heads * head_dim(); }
  int kv_group() const { return n_heads / n_kv_heads; }  // query heads per KV head
};

}  // namespace smallmind::worker
