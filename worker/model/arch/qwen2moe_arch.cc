// qwen2moe: Qwen1.5-MoE-A2.7B, Qwen2-57B-A14B. Attention is qwen2's (q/k/v biases, NeoX RoPE);
// every layer's FFN is expert_count routed experts of expert_feed_forward_length (softmax over
// all experts, top-k, the k weights NOT renormalised: llama.cpp's qwen2moe graph passes
// norm_w = false) plus one shared expert, a dense SwiGLU FFN of
// expert_shared_feed_forward_length (ffn_{gate,up,down}_shexp) whose output is scaled by
// sigmoid(ffn_gate_inp_shexp . x) and added to the routed experts' sum.
#include <array>

#include "worker/model/arch/arch_description.h"

namespace smallmind::worker {
namespace {

constexpr std::array<std::string_view, 1> kQwen2MoeKeys = {"expert_shared_feed_forward_length"};

}  // namespace

const ArchDescription kQwen2MoeArch = {
    .name = "qwen2moe",
    .rope_style = RopeStyle::kNeox,
    .qkv_bias = true,
    .rope_freqs = false,
    .rope_scaling_linear = true,
    .experts = ArchDescription::Experts::kRequired,
    .expert_weights_norm = false,
    .shared_expert = true,
    .extra_keys = kQwen2MoeKeys,
};

}  // namespace smallmind::worker
