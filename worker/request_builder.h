// BuildSequenceRequest: the worker's half of "parse, don't validate": a gateway-validated
// SubmitRequest plus the model's limits -> SequenceRequest (tokenized prompt, capped lengths).
// Called on gRPC service threads; thread-safe (the model is read-only).
#pragma once

#include "shared/status.h"
#include "smallmind/v1/worker.pb.h"
#include "worker/loader/model_loader.h"
#include "worker/sched/sequence.h"

namespace smallmind::worker {

// Errors are INVALID_ARGUMENT with the limit named: an empty prompt, a token id >= vocab_size,
// a prompt that leaves no room in the context for one new token.
shared::Result<SequenceRequest> BuildSequenceRequest(const v1::SubmitRequest& submit,
                                                     const LoadedModel& model);

}  // namespace smallmind::worker
