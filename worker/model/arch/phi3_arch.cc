// phi3: Phi-3 / Phi-3.5 mini and medium, Phi-4-mini. One fused attn_qkv.weight (q rows, then k,
// then v) and one fused ffn_up.weight (gate rows, then up rows), both read as row-range views of
// the mapped tensor; RoPE on NeoX pairs, over the first rope.dimension_count dims of a head only
// (Phi-4-mini rotates 3/4 of each head); the 128k-context files carry LongRoPE factors
// (rope_factors_long / rope_factors_short.weight, one chosen by the served context against
// rope.scaling.original_context_length) and their attention factor rope.scaling.attn_factor.
//
// attention.sliding_window is read and not applied, as llama.cpp does for phi3 (3.22-era builds
// and since: its phi3 loader sets the window to none, "Phi SWA is currently disabled", because the
// converters wrote windows the models were not trained to use; llama.cpp PR 13676). A window here
// would make smallmind differ from llama.cpp on every prompt longer than it.
#include <array>
#include <string_view>

#include "worker/model/arch/arch_description.h"

namespace smallmind::worker {
namespace {

constexpr std::array<std::string_view, 2> kPhi3Keys = {
    "attention.sliding_window",  // ignored, as llama.cpp ignores it for phi3 (above)
    "rope.scaling.attn_factor",  // read by the LongRoPE reader (gguf/longrope.cc)
};

}  // namespace

const ArchDescription kPhi3Arch = {
    .name = "phi3",
    .rope_style = RopeStyle::kNeox,
    .qkv_bias = false,
    .rope_freqs = false,
    .rope_scaling_linear = true,
    .fused_qkv = true,
    .fused_gate_up = true,
    .longrope = true,
    .partial_rotary = true,
    .extra_keys = kPhi3Keys,
};

}  // namespace smallmind::worker
