// Scalar reference element-wise ops of the llama block: SwiGLU (and gpt-oss's clamped one), the
// residual add, the bias add, a scale (gemma's embedding scale) and soft-capping (gemma2's final
// logits).
// Called through KernelTable by the engine; thread-safe on disjoint token ranges. No reduction.
#pragma once

#include <cmath>

#include "kernels/partition.h"

namespace smallmind::kernels {

// silu(x) = x * sigmoid(x), written as run.c does.
inline float Silu(float x) { return x * (1.0f / (1.0f + std::exp(-x))); }

// gate[t, i] = silu(gate[t, i]) * up[t, i] for t in tokens. gate, up: [n_tokens, hidden].
void SwiGluRef(float* gate, const float* up, int hidden, RowRange tokens);

// gpt-oss's clamped SwiGLU, llama.cpp's ggml_swiglu_oai in its float order: g = min(gate, limit),
// u = clamp(up, -limit, limit), gate = g / (1 + exp(alpha * -g)) * (u + 1), for t in tokens.
void SwiGluOaiRef(float* gate, const float* up, int hidden, float alpha, float limit,
                  RowRange tokens);

// x[t, i] += delta[t, i] for t in tokens. x, delta: [n_tokens, dim].
void AddRef(float* x, const float* delta, int dim, RowRange tokens);

// x[t, i] += bias[i] for t in tokens. x: [n_tokens, dim]; bias: [dim].
void AddBiasRef(float* x, const float* bias, int dim, RowRange tokens);

// x[t, i] *= s for t in tokens. x: [n_tokens, dim].
void ScaleRef(float* x, int dim, float s, RowRange tokens);

// x[t, i] = cap * tanh(x[t, i] * (1 / cap)) for t in tokens (std::tanh; the order of llama.cpp's
// scale, tanh, scale graph of gemma2's final logit soft-capping). x: [n_tokens, dim].
void SoftCapRowsRef(float* x, int dim, float cap, RowRange tokens);

}  // namespace smallmind::kernels
