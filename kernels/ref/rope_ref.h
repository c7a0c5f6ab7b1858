// Scalar reference rotary position embedding (RoPE), both pair layouts. Called through KernelTable
// by the engine on q and k; thread-safe on disjoint row ranges. No reduction.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/kernels.h"

namespace smallmind::kernels {

// Rotates x: [n_tokens, n_heads, head_dim] in place for the flat rows r = t * n_heads + h in
// `rows`. The pair (a, b) with frequency index j (j = a % head_dim for kInterleaved, 2 * a for
// kNeox) turns by positions[t] * theta^(-j / head_dim), computed in float as llama2.c run.c does;
// with freqs.factors that frequency is divided by factors[j / 2], then multiplied by freqs.scale
// when it is not 1 (llama.cpp's freq_factors and freq_scale).
void RopeRef(float* x, const int32_t* positions, int n_heads, int head_dim, const RopeFreqs& freqs,
             RopeLayout layout, RowRange rows);

// The frequency of pair index j (j = 2i) of a head_dim head under `freqs`, in float: the formula
// RopeRef and the ISA kernels share, so their angles agree bit for bit.
inline float RopeFrequency(int j, int head_dim, const RopeFreqs& freqs) {
  float freq = 1.0f / std::pow(freqs.theta, j / static_cast<float>(head_dim));
  if (freqs.factors != nullptr) freq /= freqs.factors[j / 2];
  if (freqs.scale != 1.0f) freq *= freqs.scale;
  return freq;
}

}  // namespace smallmind::kernels
