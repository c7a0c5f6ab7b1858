// qwen3moe: Qwen3 mixture-of-experts models (Qwen3-30B-A3B, Qwen3-235B-A22B). Attention is
// qwen3's (per-head q/k RMSNorm, NeoX RoPE, heads attention.key_length wide); every layer's FFN is
// expert_count experts of expert_feed_forward_length inner width, of which a router picks
// expert_used_count per token (softmax over all experts, top-k, the k weights renormalised to sum
// 1, as llama.cpp's qwen3moe graph does). No shared expert.
#include "worker/model/arch/arch_description.h"

namespace smallmind::worker {

const ArchDescription kQwen3MoeArch = {
    .name = "qwen3moe",
    .rope_style = RopeStyle::kNeox,
    .qkv_bias = false,
    .rope_freqs = false,
    .rope_scaling_linear = true,
    .qk_norm = true,
    .experts = ArchDescription::Experts::kRequired,
    .expert_weights_norm = true,
};

}  // namespace smallmind::worker
