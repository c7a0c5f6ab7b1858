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
};

// The descriptions of the families smallmind runs, one per file of this folder.
extern const ArchDescription kLlamaArch;  // llama_arch.cc
extern const ArchDescription kQwen2Arch;  // qwen2_arch.cc

// Every supported family, in the order error messages list them.
std::span<const ArchDescription* const> SupportedArchs();

// The family named `name`, or nullptr when smallmind does not run it.
const ArchDescription* FindArch(std::string_view name);

// "llama, qwen2": the supported names, for error messages and `smallmind info`.
std::string_view SupportedArchNames();

}  // namespace smallmind::worker
