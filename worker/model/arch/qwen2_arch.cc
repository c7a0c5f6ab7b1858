// qwen2: Qwen2 / Qwen2.5. Biases on the q, k and v projections; RoPE on NeoX pairs (the Hugging
// Face layout, which the GGUF converter keeps for this family).
#include "worker/model/arch/arch_description.h"

namespace smallmind::worker {

const ArchDescription kQwen2Arch = {
    .name = "qwen2",
    .rope_style = RopeStyle::kNeox,
    .qkv_bias = true,
    .rope_freqs = false,
    .rope_scaling_linear = true,
};

}  // namespace smallmind::worker
