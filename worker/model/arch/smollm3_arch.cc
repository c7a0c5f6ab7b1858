// smollm3: SmolLM3 (Hugging Face's 3B). The llama block with interleaved RoPE pairs as the GGUF
// converter stores llama-family q/k rows, except that every 4th layer ((l + 1) % 4 == 0) applies
// no RoPE at all (its attention is position-free, NoPE), the rule llama.cpp hard-codes for this
// family (n_no_rope_layer_step = 4; the Hugging Face config's no_rope_layers list is not in the
// GGUF). Tied embeddings are common (no output.weight).
#include "worker/model/arch/arch_description.h"

namespace smallmind::worker {

const ArchDescription kSmolLm3Arch = {
    .name = "smollm3",
    .rope_style = RopeStyle::kInterleaved,
    .qkv_bias = false,
    .rope_freqs = false,
    .rope_scaling_linear = true,
    .no_rope_period = 4,
};

}  // namespace smallmind::worker
