// Rerank through the gateway, whatever door it came in by: the request's documents become the
// inputs of an EmbedCall (one admission, one worker, one batch) with the query in
// EmbedWork.rerank_query, and the worker's per-document scores become the results, sorted and
// cut to top_n. Free functions; thread-safe (`done` is called once, on any thread).
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "gateway/relay/embed_call.h"
#include "gateway/relay/request_relay.h"
#include "shared/status.h"
#include "smallmind/v1/inference.pb.h"

namespace smallmind::gateway {

using RerankDone = std::function<void(const shared::Status&, const smallmind::v1::RerankResponse&)>;

// The model-independent checks (request_id at most 128 bytes, a non-empty query, 1 to
// kMaxEmbedInputs documents, none empty); INVALID_ARGUMENT naming the field. The worker checks
// the model (a reranker) and the pairs' lengths.
shared::Status CheckRerankRequest(const smallmind::v1::RerankRequest& request);

// `request` has request_id set and passed CheckRerankRequest; `deadline` as EmbedCall's. Returns
// the call's cancel (EmbedCall::Run's).
EmbedCancel RunRerank(std::shared_ptr<RelayEnv> env, smallmind::v1::RerankRequest request,
                      std::chrono::system_clock::time_point deadline, RerankDone done);

// The results of `scores` (the worker's answer, one embedding of head values per document in
// request order) for `request`: by relevance_score (values[0]) highest first, equal scores by
// index, at most top_n when it is set, each with its document when return_documents asks;
// usage, request_id and worker_id carried over.
smallmind::v1::RerankResponse RankResults(const smallmind::v1::RerankRequest& request,
                                          const smallmind::v1::EmbedResponse& scores);

}  // namespace smallmind::gateway
