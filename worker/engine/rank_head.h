// RankHead: a cross-encoder reranker's classification head (llama.cpp's rank pooling) over the
// [CLS] states of a step's query-document inputs: scores = cls_out . tanh(cls . x + cls_b) +
// cls_out_b, either linear layer skipped when the file has none. Called by ForwardBert on the
// engine thread after the last layer; runs kernels only through the OpRunner.
#pragma once

#include "worker/engine/op_runner.h"
#include "worker/model/weights.h"

namespace smallmind::worker {

// Returns [n, config.rank_outputs]: the head's values of x: [n, dim] (n [CLS] rows), left in x
// or in scratch: [n, dim] (both are overwritten). Every row is computed alone (the matmul
// kernels' rows), so a pair's score is the same bits whatever else is batched beside it on the
// deterministic path.
const float* RankHead(const ModelConfig& config, const Weights& weights, int n, OpRunner& ops,
                      float* x, float* scratch);

}  // namespace smallmind::worker
