// QuantMix: llama.cpp's quantization mixes (its LLAMA_FTYPE_MOSTLY_* presets: which tensor of a
// llama-shaped model llama_tensor_get_type, src/llama-quant.cpp, stores in which type) for the
// tensors the model generator writes. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "kernels/dtype.h"

namespace smallmind::worker {

enum class QuantMix { kNone, kQ4_K_M, kQ5_K_M, kQ2_K, kQ3_K_S, kQ3_K_M, kMxfp4Moe };

// The matrices of a llama-family layer (and the model's ends) a mix tells apart.
enum class MixTensor {
  kTokenEmbd,
  kOutput,
  kAttnQ,
  kAttnK,
  kAttnV,
  kAttnOutput,
  kFfnGate,
  kFfnUp,
  kFfnDown,
  kFfnExperts,  // a layer's 3-D ffn_gate_exps / ffn_up_exps / ffn_down_exps
};

// "q4_k_m", "q5_k_m", "q2_k", "q3_k_s", "q3_k_m", "mxfp4_moe" (lower case) -> the mix; nullopt
// otherwise.
std::optional<QuantMix> QuantMixFromName(std::string_view lower_name);
// The type most of the mix's matrices take (llama.cpp's default_type of the ftype): Q4_K, Q5_K,
// Q2_K, Q3_K, Q3_K, MXFP4.
kernels::DType QuantMixBaseType(QuantMix mix);
// llama.cpp's general.file_type of the mix: MOSTLY_Q4_K_M 15, Q5_K_M 17, Q2_K 10, Q3_K_S 11,
// Q3_K_M 12, MXFP4_MOE 38.
uint32_t QuantMixFileType(QuantMix mix);

// The type `mix` stores `tensor` of layer `layer` (of n_layers; n_gqa = heads / KV heads) in,
// before the row-length fallback (LlamaGgufBuilder applies that): llama.cpp's rules for a
// non-Falcon model without experts or an imatrix. `tied`: token_embd is also the classifier
// (no output.weight), which llama.cpp then quantizes as output.weight. kNone: `base`. Experts
// take `base` in every mix but MXFP4_MOE's (the K mixes' per-layer rules are for dense FFNs).
kernels::DType QuantMixTensorType(QuantMix mix, kernels::DType base, MixTensor tensor, int layer,
                                  int n_layers, int n_gqa, bool tied);

}  // namespace smallmind::worker
