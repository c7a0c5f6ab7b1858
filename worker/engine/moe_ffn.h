// MoeFfn: the feed-forward block of a mixture-of-experts layer (qwen3moe, Mixtral-style llama,
// olmoe, gpt-oss with its router and expert biases and clamped SwiGLU, qwen2moe with its shared
// expert: a dense FFN every token runs, gated by a sigmoid, added to the routed sum)
// over one step's tokens: route each token to its top-k experts, group the step's rows by expert
// so each expert's weights are read once for every token routed to it (an expert no token picked
// is not read at all), run the experts, and combine each token's k outputs in slot order. Called
// by ForwardLlama on the engine thread; writes only the MoE scratch of the Activations.
//
// Batch invariance (the deterministic path): a token's routing reads only its own router row, its
// rows through the experts are computed as the matmul kernels compute any row alone, and its k
// outputs are summed in slot order (highest router probability first), so its result does not
// depend on which other tokens share the step.
#pragma once

#include "worker/engine/activations.h"
#include "worker/engine/op_runner.h"
#include "worker/model/weights.h"

namespace smallmind::worker {

// out: [n, dim] = the experts' FFN of xb: [n, dim] (the ffn-normed residual stream) for layer `w`.
void MoeFfn(const ModelConfig& config, const LayerWeights& w, const float* xb, int n, OpRunner& ops,
            Activations* a, float* out);

// The routing of one token (exposed for tests): probs: [n_experts] router scores (with the
// router's bias). kSoftmaxTopK: turned in place into their softmax, the k experts of highest
// probability into experts[0, k) and their probabilities into weights[0, k), divided by their sum
// when `normalize`. kTopKSoftmax (gpt-oss): the k experts of highest score, their weights the
// softmax of those k scores (probs left as they are). Ties: the lower index first, a stable
// descending sort's order (llama.cpp's argsort of so few experts).
void RouteToken(float* probs, int n_experts, int k, bool normalize, int32_t* experts,
                float* weights, ExpertGating gating = ExpertGating::kSoftmaxTopK);

}  // namespace smallmind::worker
