// The BERT encoder's forward pass over one batched step (llama.cpp's bert graph), read top to
// bottom like forward_llama.cc: every seq of the plan is one whole input (start_pos 0), attending
// bidirectionally over its own tokens only, and leaves its pooled embedding in act->pooled.
// Called by Engine::Step on the engine thread for ModelConfig::encoder models; runs kernels only
// through the OpRunner and keeps no KV cache (the step's own K/V rows are the attention's view).
#pragma once

#include "worker/engine/activations.h"
#include "worker/engine/op_runner.h"
#include "worker/model/weights.h"
#include "worker/sched/step_plan.h"

namespace smallmind::worker {

// Runs every seq's tokens through the encoder and, for each seq s with an embed pooling, writes
// row s of act->pooled ([dim]) from its last hidden states (not normalised); a seq pooled kRank
// (a query-document pair of a reranker) gets its classification head's rank_outputs values of
// its [CLS] state at the start of that row (RankHead). Each token's result
// depends only on its own input's tokens: the same bits whatever else is batched beside it on the
// deterministic path.
void ForwardBert(const ModelConfig& config, const Weights& weights, const StepPlan& plan,
                 OpRunner& ops, Activations* act);

}  // namespace smallmind::worker
