// Pooling: one embedding out of an input's last hidden states (as the GGUF's pooling_type says),
// and the L2 normalisation embeddings are served with. Plain functions over caller-owned
// buffers: no allocation, thread-safe.
#pragma once

#include <span>

#include "worker/types/pooling_type.h"

namespace smallmind::worker {

// Whether `pooling` makes one vector of a whole input (mean, cls, last).
bool PoolsInput(PoolingType pooling);

// out[dim] = the pooling of hidden [n, dim] (n >= 1, one input's tokens in order): their mean, the
// first row or the last. Requires PoolsInput(pooling); the mean sums in token order (the same
// bits whatever else is batched with the input).
void PoolHidden(PoolingType pooling, const float* hidden, int n, int dim, float* out);

// v /= |v|_2, summed in double as llama.cpp's common_embd_normalize does; a zero vector stays zero.
void L2Normalize(std::span<float> v);

}  // namespace smallmind::worker
