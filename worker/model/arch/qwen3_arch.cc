// qwen3: Qwen3 dense models. No q/k/v biases; instead each head's q and k are RMS-normed
// (attn_q_norm / attn_k_norm, [head_dim], the model's eps) before RoPE on NeoX pairs; heads are
// attention.key_length wide, which need not be embedding / heads.
#include "worker/model/arch/arch_description.h"

namespace smallmind::worker {

const ArchDescription kQwen3Arch = {
    .name = "qwen3",
    .rope_style = RopeStyle::kNeox,
    .qkv_bias = false,
    .rope_freqs = false,
    .rope_scaling_linear = true,
    .qk_norm = true,
};

}  // namespace smallmind::worker
