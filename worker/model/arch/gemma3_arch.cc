// gemma3: Gemma 3 text models. Gemma 2's block (sqrt(dim) embedding scale, post-attention and
// post-FFN RMSNorms, GeGLU with GELU(tanh), NeoX RoPE) without attention soft-capping, with
// per-head q/k RMSNorms (attn_q_norm, attn_k_norm) before RoPE; five windowed layers to one global
// when the file names a sliding_window (none otherwise); the windowed layers rotate with base
// rope.freq_base_swa (10000 when absent) unscaled, the global ones with the file's base and rope
// scaling; final soft-capping only when the file asks; the 27B (62 layers) scales queries by
// 1 / sqrt(dim / heads).
#include "worker/model/arch/arch_description.h"

namespace smallmind::worker {

const ArchDescription kGemma3Arch = {
    .name = "gemma3",
    .rope_style = RopeStyle::kNeox,
    .qkv_bias = false,
    .rope_freqs = false,
    .rope_scaling_linear = true,
    .qk_norm = true,
    .post_norms = true,
    .ffn_activation = FfnActivation::kGeluTanh,
    .embedding_scale = true,
    .query_scale = true,
    .wide_query_scale_layers = 62,
    .attn_softcap = 0.0f,
    .final_softcap_key = true,
    .final_softcap = 0.0f,
    .swa_period = 6,
    .default_window = 0,
    .swa_rope_theta = 10000.0f,
};

}  // namespace smallmind::worker
