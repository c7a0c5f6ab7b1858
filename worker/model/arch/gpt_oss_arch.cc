// gpt-oss: OpenAI's gpt-oss-20b / -120b (llama.cpp's LLM_ARCH_OPENAI_MOE, architecture name
// "gpt-oss"). Attention with biases on q, k, v and the output, NeoX RoPE with YaRN scaling
// (rope.scaling.type yarn, factor, original_context_length), one learned sink logit per head in
// the softmax (attn_sinks), and every other layer windowed (attention.sliding_window; the even
// layers, llama.cpp's swa pattern 2), all layers with the file's RoPE. The FFN's pre-norm is named
// post_attention_norm in these files. Every layer's FFN is experts with biases: the router
// (ffn_gate_inp + bias) takes the top-k scores, then the softmax over those k (llama.cpp's
// SOFTMAX_WEIGHT gating, no renormalisation), and each expert computes the clamped SwiGLU
// (swiglu_oai). Untied output.weight.
#include "worker/model/arch/arch_description.h"

namespace smallmind::worker {

const ArchDescription kGptOssArch = {
    .name = "gpt-oss",
    .rope_style = RopeStyle::kNeox,
    .qkv_bias = true,
    .rope_freqs = false,
    .rope_scaling_linear = false,
    .qk_norm = false,
    .post_norms = false,
    .ffn_activation = FfnActivation::kSwiGluOai,
    .swa_period = 2,
    .default_window = 0,
    .swa_rope_theta = 0.0f,
    .experts = ArchDescription::Experts::kRequired,
    .expert_weights_norm = false,
    .expert_gating = ExpertGating::kTopKSoftmax,
    .attn_output_bias = true,
    .attn_sinks = true,
    .expert_biases = true,
    .rope_scaling_yarn = true,
    .ffn_norm_name = "post_attention_norm",
};

}  // namespace smallmind::worker
