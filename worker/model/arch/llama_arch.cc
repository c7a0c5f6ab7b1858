// llama: Llama 1-3.x, Mistral-style files without a window, TinyLlama, SmolLM2. The GGUF converter
// permutes Q/K rows so RoPE rotates interleaved pairs. Llama 3.1+ carries rope_freqs.weight (the
// "llama3" rope scaling as per-pair divisors); older fine-tunes may set linear rope scaling.
// Mixtral-style files set llama.expert_count and carry a router and 3-D experts (ffn_gate_inp,
// ffn_*_exps) in place of the dense FFN: softmax, top-k, the k weights renormalised.
#include "worker/model/arch/arch_description.h"

namespace smallmind::worker {

const ArchDescription kLlamaArch = {
    .name = "llama",
    .rope_style = RopeStyle::kInterleaved,
    .qkv_bias = false,
    .rope_freqs = true,
    .rope_scaling_linear = true,
    .experts = ArchDescription::Experts::kAllowed,
    .expert_weights_norm = true,
};

}  // namespace smallmind::worker
