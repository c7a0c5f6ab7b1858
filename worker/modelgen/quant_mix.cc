// The rules, from llama_tensor_get_type (src/llama-quant.cpp) for these ftypes:
//   output.weight (or a tied token_embd): Q6_K.
//   attn_v:      Q4_K_M / Q5_K_M Q6_K on use_more_bits layers; Q2_K Q4_K when n_gqa >= 4, else
//                Q3_K; Q3_K_M Q5_K for the first 2 layers, then Q4_K.
//   ffn_down:    Q4_K_M / Q5_K_M Q6_K on use_more_bits layers; Q2_K Q3_K; Q3_K_M Q5_K for layers
//                below n_layers / 16, then Q4_K.
//   attn_output: Q2_K Q3_K; Q3_K_M Q4_K.
// Everything else (token_embd, attn_q, attn_k, ffn_gate, ffn_up; every Q3_K_S matrix but the
// output) takes the base type.
// MXFP4_MOE (gpt-oss's published files): every 3-D tensor (the experts) MXFP4, every other
// matrix Q8_0 but output.weight (or a tied token_embd), which takes the first rule's Q6_K.
#include "worker/modelgen/quant_mix.h"

namespace smallmind::worker {

using kernels::DType;

namespace {

// llama.cpp's use_more_bits(i_layer, n_layers): the first and last eighth and every third layer
// between.
bool UsesMoreBits(int layer, int n_layers) {
  return layer < n_layers / 8 || layer >= 7 * n_layers / 8 || (layer - n_layers / 8) % 3 == 2;
}

DType AttnVType(QuantMix mix, DType base, int layer, int n_layers, int n_gqa) {
  switch (mix) {
    case QuantMix::kQ4_K_M:
    case QuantMix::kQ5_K_M: return UsesMoreBits(layer, n_layers) ? DType::kQ6_K : base;
    case QuantMix::kQ2_K: return n_gqa >= 4 ? DType::kQ4_K : DType::kQ3_K;
    case QuantMix::kQ3_K_M: return layer < 2 ? DType::kQ5_K : DType::kQ4_K;
    default: return base;
  }
}

DType FfnDownType(QuantMix mix, DType base, int layer, int n_layers) {
  switch (mix) {
    case QuantMix::kQ4_K_M:
    case QuantMix::kQ5_K_M: return UsesMoreBits(layer, n_layers) ? DType::kQ6_K : base;
    case QuantMix::kQ2_K: return DType::kQ3_K;
    case QuantMix::kQ3_K_M: return layer < n_layers / 16 ? DType::kQ5_K : DType::kQ4_K;
    default: return base;
  }
}

}  // namespace

std::optional<QuantMix> QuantMixFromName(std::string_view name) {
  if (name == "q4_k_m") return QuantMix::kQ4_K_M;
  if (name == "q5_k_m") return QuantMix::kQ5_K_M;
  if (name == "q2_k") return QuantMix::kQ2_K;
  if (name == "q3_k_s") return QuantMix::kQ3_K_S;
  if (name == "q3_k_m") return QuantMix::kQ3_K_M;
  if (name == "mxfp4_moe") return QuantMix::kMxfp4Moe;
  return std::nullopt;
}

DType QuantMixBaseType(QuantMix mix) {
  switch (mix) {
    case QuantMix::kQ5_K_M: return DType::kQ5_K;
    case QuantMix::kQ2_K: return DType::kQ2_K;
    case QuantMix::kQ3_K_S:
    case QuantMix::kQ3_K_M: return DType::kQ3_K;
    case QuantMix::kMxfp4Moe: return DType::kMXFP4;
    default: return DType::kQ4_K;
  }
}

uint32_t QuantMixFileType(QuantMix mix) {
  switch (mix) {
    case QuantMix::kQ5_K_M: return 17;
    case QuantMix::kQ2_K: return 10;
    case QuantMix::kQ3_K_S: return 11;
    case QuantMix::kQ3_K_M: return 12;
    case QuantMix::kMxfp4Moe: return 38;
    default: return 15;
  }
}

DType QuantMixTensorType(QuantMix mix, DType base, MixTensor tensor, int layer, int n_layers,
                         int n_gqa, bool tied) {
  if (mix == QuantMix::kNone) return base;
  if (mix == QuantMix::kMxfp4Moe) {
    if (tensor == MixTensor::kFfnExperts) return DType::kMXFP4;
    const bool classifier =
        tensor == MixTensor::kOutput || (tensor == MixTensor::kTokenEmbd && tied);
    return classifier ? DType::kQ6_K : DType::kQ8_0;
  }
  switch (tensor) {
    case MixTensor::kOutput: return DType::kQ6_K;
    case MixTensor::kTokenEmbd: return tied ? DType::kQ6_K : base;
    case MixTensor::kAttnV: return AttnVType(mix, base, layer, n_layers, n_gqa);
    case MixTensor::kFfnDown: return FfnDownType(mix, base, layer, n_layers);
    case MixTensor::kAttnOutput:
      return mix == QuantMix::kQ2_K ? DType::kQ3_K : mix == QuantMix::kQ3_K_M ? DType::kQ4_K : base;
    default: return base;  // kFfnExperts included
  }
}

}  // namespace smallmind::worker
