// BuildEmbedRequests: the worker's half of "parse, don't validate" for Embed: a gateway-checked
// EmbedWork plus the model -> one SequenceRequest per input (tokenized, pooling resolved) and the
// width to return. The checks that need the model live here. Called on a request lane; thread-safe
// (the model is read-only).
#pragma once

#include <vector>

#include "shared/status.h"
#include "smallmind/v1/worker.pb.h"
#include "worker/loader/model_loader.h"
#include "worker/sched/sequence.h"

namespace smallmind::worker {

struct EmbedRequests {
  std::vector<SequenceRequest> inputs;  // one per EmbedRequest input, in order
  int dimensions = 0;                   // values returned per vector (<= the model's dim)
  // EmbedWork.rerank_query was set: each input is the query joined with a document, pooled by
  // the model's classification head; its values are raw scores (rank_outputs of them), which
  // are neither truncated nor normalised.
  bool rerank = false;
};

// Errors are INVALID_ARGUMENT naming the input and the model's limit: no inputs or more than
// kMaxEmbedInputs, an input that tokenizes to nothing or to more than the context, a token id
// >= vocab_size, dimensions above the model's width, and a pooling the model cannot give (a
// generation model without pooling_type and no POOLING_LAST asked; LAST on an encoder pooling
// otherwise; a reranker asked to embed). With rerank_query: a model that does not pool by rank
// (naming its pooling), or a query and document pair longer than the context (naming the
// document).
shared::Result<EmbedRequests> BuildEmbedRequests(const v1::EmbedWork& work,
                                                 const LoadedModel& model);

inline constexpr int kMaxEmbedInputs = 2048;  // OpenAI's limit on `input` arrays

}  // namespace smallmind::worker
