// gemma2: Gemma 2. Embeddings scaled by sqrt(dim); RMSNorms on the attention and FFN outputs too
// (post_attention_norm, post_ffw_norm; the GGUF converter has folded Gemma's 1 + w into every
// norm weight, so they are plain RMSNorms here); GeGLU with GELU(tanh); attention logits
// soft-capped (attn_logit_softcapping, 50 when absent) and the final logits too
// (final_logit_softcapping, 30 when absent); every other layer windowed (sliding_window, 4096 when
// absent; the odd layers global), all with the file's RoPE; NeoX RoPE pairs; the 27B (46 layers)
// scales queries by 1 / sqrt(dim / heads). Tied embeddings.
#include "worker/model/arch/arch_description.h"

namespace smallmind::worker {

const ArchDescription kGemma2Arch = {
    .name = "gemma2",
    .rope_style = RopeStyle::kNeox,
    .qkv_bias = false,
    .rope_freqs = false,
    .rope_scaling_linear = true,
    .qk_norm = false,
    .post_norms = true,
    .ffn_activation = FfnActivation::kGeluTanh,
    .embedding_scale = true,
    .query_scale = true,
    .wide_query_scale_layers = 46,
    .attn_softcap = 50.0f,
    .final_softcap_key = true,
    .final_softcap = 30.0f,
    .swa_period = 2,
    .default_window = 4096,
    .swa_rope_theta = 0.0f,
};

}  // namespace smallmind::worker
