// Scalar reference LayerNorm (BERT's embedding and block norms): computed as llama.cpp's CPU
// backend does it (ggml_norm: mean and variance summed in double, one float scale, then ggml_mul
// by the weight and ggml_add of the bias, each rounded to float). Thread-safe on disjoint token
// ranges.
#pragma once

#include "kernels/partition.h"

namespace smallmind::kernels {

// out[t, :] = (x[t, :] - mean) * (1 / sqrt(var + eps)) * weight + bias for t in tokens, mean and
// var (biased) of x[t, :]. x, out: [n_tokens, dim] (out may alias x); weight, bias: [dim]; bias
// may be null (none).
void LayerNormRef(const float* x, const float* weight, const float* bias, float* out, int dim,
                  float eps, RowRange tokens);

}  // namespace smallmind::kernels
