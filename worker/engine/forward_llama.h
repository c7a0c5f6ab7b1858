// The llama forward pass over one batched step, written to read top to bottom like llama2.c run.c.
// Called by Engine::Step on the engine thread; it runs kernels only through the OpRunner (which
// spreads each op over the thread pool) and writes only the Activations and the pool rows of the
// step's positions.
#pragma once

#include "worker/engine/activations.h"
#include "worker/engine/op_runner.h"
#include "worker/kv/kv_pool.h"
#include "worker/model/weights.h"
#include "worker/sched/step_plan.h"

namespace smallmind::worker {

// What the forward pass reads (model) and the cache it writes.
struct LlamaForwardContext {
  const ModelConfig& config;
  const Weights& weights;
  KvPool& kv;
};

// Runs every token of `plan` through the model, writing each token's K/V into the pool at its
// position, and for every seq s with want_logits puts the logits of its last logits_tokens tokens
// in rows act->logits_row[s]... of act->logits (-1 for the others). The plan must fit the
// activations.
void ForwardLlama(const LlamaForwardContext& ctx, const StepPlan& plan, OpRunner& ops,
                  Activations* act);

}  // namespace smallmind::worker
