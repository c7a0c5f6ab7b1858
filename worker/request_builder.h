// BuildSequenceRequest: the worker's half of "parse, don't validate": a gateway-validated
// SubmitRequest plus the model -> SequenceRequest (tokenized prompt, defaults, capped lengths). The
// checks that need the model live here and nowhere else. Called on gRPC service threads;
// thread-safe (the model is read-only).
#pragma once

#include "shared/status.h"
#include "smallmind/v1/worker.pb.h"
#include "worker/loader/model_loader.h"
#include "worker/sched/sequence.h"

namespace smallmind::worker {

// Errors are INVALID_ARGUMENT naming the field, the model's limit and the value: prompt_token_ids
// empty, longer than the context or with an id >= vocab_size; a prompt (after BOS) empty or leaving
// no room for one new token; top_k > vocab_size; max_new_tokens > the context; and sampling
// fields outside the sampler's contract (only when the gateway was skipped).
shared::Result<SequenceRequest> BuildSequenceRequest(const v1::SubmitRequest& submit,
                                                     const LoadedModel& model);

}  // namespace smallmind::worker
