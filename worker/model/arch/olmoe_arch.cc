// olmoe: AllenAI's OLMoE-1B-7B. llama-like attention without biases, but q and k RMS-normed over
// each token's whole row (attn_q_norm [q_dim], attn_k_norm [kv_dim]: llama.cpp's olmoe graph norms
// the [n_embd] rows before splitting them into heads) before RoPE on NeoX pairs
// (llama_model_rope_type: LLAMA_ROPE_TYPE_NEOX); every layer's FFN is expert_count experts of
// feed_forward_length (64 of which 8 are used in the published model): softmax over all experts,
// top-k, the k weights not renormalised (the graph's norm_w = false).
#include "worker/model/arch/arch_description.h"

namespace smallmind::worker {

const ArchDescription kOlmoeArch = {
    .name = "olmoe",
    .rope_style = RopeStyle::kNeox,
    .qkv_bias = false,
    .rope_freqs = false,
    .rope_scaling_linear = true,
    .qk_norm = true,
    .qk_norm_whole_row = true,
    .experts = ArchDescription::Experts::kRequired,
    .expert_weights_norm = false,
    .expert_ffn_key = false,
};

}  // namespace smallmind::worker
