// Scalar reference rotary position embedding (RoPE), both pair layouts. Called through KernelTable
// by the engine on q and k; thread-safe on disjoint row ranges. No reduction.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/kernels.h"

namespace smallmind::kernels {

// Rotates x: [n_tokens, n_heads, head_dim] in place for the flat rows r = t * n_heads + h in
// `rows`. Only the first n = RopeDims(head_dim, freqs) dims of each head rotate, the others are
// left as they are. The pair (a, b) with frequency index j (j = a for kInterleaved, 2 * a for
// kNeox, whose pairs are (a, a + n / 2)) turns by positions[t] * theta^(-j / n), computed in
// float as llama2.c run.c does; with freqs.factors that frequency is divided by factors[j / 2],
// then multiplied by freqs.scale when it is not 1 (llama.cpp's freq_factors and freq_scale); cos
// and sin are multiplied by freqs.mscale when it is not 1 (llama.cpp's attn_factor).
void RopeRef(float* x, const int32_t* positions, int n_heads, int head_dim, const RopeFreqs& freqs,
             RopeLayout layout, RowRange rows);

// The dims of a head_dim head that rotate under `freqs`.
inline int RopeDims(int head_dim, const RopeFreqs& freqs) {
  return freqs.rot_dims > 0 && freqs.rot_dims < head_dim ? freqs.rot_dims : head_dim;
}

// The frequency of pair index j (j = 2i) of n rotated dims under `freqs`, in float: the formula
// RopeRef and the ISA kernels share, so their angles agree bit for bit.
inline float RopeFrequency(int j, int n, const RopeFreqs& freqs) {
  float freq = 1.0f / std::pow(freqs.theta, j / static_cast<float>(n));
  if (freqs.factors != nullptr) freq /= freqs.factors[j / 2];
  if (freqs.scale != 1.0f) freq *= freqs.scale;
  return freq;
}

// cos and sin of `angle`, times freqs.mscale when it is not 1.
inline void RopeCosSin(float angle, const RopeFreqs& freqs, float* c, float* s) {
  *c = std::cos(angle);
  *s = std::sin(angle);
  if (freqs.mscale != 1.0f) {
    *c *= freqs.mscale;
    *s *= freqs.mscale;
  }
}

}  // namespace smallmind::kernels
