// Scalar reference rotary position embedding (RoPE), both pair layouts. Called through KernelTable
// by the engine on q and k; thread-safe on disjoint row ranges. No reduction.
#pragma once

#include <cstdint>

#include "kernels/kernels.h"

namespace smallmind::kernels {

// Rotates x: [n_tokens, n_heads, head_dim] in place for the flat rows r = t * n_heads + h in
// `rows`. The pair (a, b) with frequency index j (j = a % head_dim for kInterleaved, 2 * a for
// kNeox) turns by positions[t] * theta^(-j / head_dim), computed in float as llama2.c run.c does.
void RopeRef(float* x, const int32_t* positions, int n_heads, int head_dim, float theta,
             RopeLayout layout, RowRange rows);

}  // namespace smallmind::kernels
