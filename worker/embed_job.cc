#include "worker/embed_job.h"

#include "shared/grpc_status.h"
#include "worker/embed_request_builder.h"
#include "worker/engine/pooling.h"

namespace smallmind::worker {

EmbedJob::EmbedJob(int n_inputs, int dimensions, bool rerank, EmbedReactor* reactor,
                   v1::EmbedResponse* response)
    : dimensions_(dimensions),
      rerank_(rerank),
      reactor_(reactor),
      response_(response),
      vectors_(static_cast<size_t>(n_inputs)),
      tokens_(static_cast<size_t>(n_inputs), 0),
      remaining_(n_inputs) {
  for (int i = 0; i < n_inputs; i++) sinks_.push_back(std::make_unique<InputSink>(this, i));
}

void EmbedJob::Start(const v1::EmbedWork& work, const LoadedModel& model,
                     std::atomic<uint64_t>* next_sequence_id, int worker_id, EmbedReactor* reactor,
                     v1::EmbedResponse* response) {
  shared::Result<EmbedRequests> built = BuildEmbedRequests(work, model);
  if (!built.ok()) {
    reactor->Finish(shared::ToGrpcStatus(built.status()));
    return;
  }
  const int n = static_cast<int>(built->inputs.size());
  response->set_request_id(work.request().request_id());
  response->set_worker_id(static_cast<uint32_t>(worker_id));
  auto* job = new EmbedJob(n, built->dimensions, built->rerank, reactor, response);
  std::vector<Command> submits;
  std::vector<uint64_t> ids;
  submits.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; i++) {
    job->tokens_[i] = static_cast<int>(built->inputs[i].prompt.size());
    ids.push_back(next_sequence_id->fetch_add(1));
    submits.emplace_back(SubmitCommand{
        std::make_unique<Sequence>(ids.back(), std::move(built->inputs[i]), *model.tokenizer,
                                   model.llama.config.vocab_size, job->sinks_[i].get())});
  }
  if (reactor->PushSequences(std::move(submits), std::move(ids))) return;  // the sinks own it now
  // Cancelled while it waited for its lane: nothing reached the scheduler.
  delete job;
  reactor->Finish(shared::ToGrpcStatus(
      shared::Status(shared::StatusCode::kCancelled, "the Embed call was cancelled")));
}

void EmbedJob::OnInputDone(int index, const FinishEvent& event) {
  if (!event.status.ok() && first_error_.ok()) {
    first_error_ = event.status;
  } else if (event.status.ok() && event.embedding.empty() && first_error_.ok()) {
    first_error_ = shared::Unavailable("the worker stopped before the input was embedded");
  }
  vectors_[index] = event.embedding;
  if (--remaining_ > 0) return;
  Complete();
  delete this;  // the last call of the last sink (SequenceSink's contract)
}

void EmbedJob::Complete() {
  if (reactor_->cancelled()) {
    reactor_->Finish(shared::ToGrpcStatus(
        shared::Status(shared::StatusCode::kCancelled, "the Embed call was cancelled")));
    return;
  }
  if (!first_error_.ok()) {
    reactor_->Finish(shared::ToGrpcStatus(first_error_));
    return;
  }
  uint32_t prompt_tokens = 0;
  for (size_t i = 0; i < vectors_.size(); i++) {
    std::vector<float>& v = vectors_[i];
    v.resize(static_cast<size_t>(dimensions_));  // OpenAI's `dimensions`: truncate, renormalise
    if (!rerank_) L2Normalize(v);                // a reranker's values are raw scores
    v1::Embedding* e = response_->add_embeddings();
    e->mutable_values()->Add(v.begin(), v.end());
    e->set_tokens(static_cast<uint32_t>(tokens_[i]));
    prompt_tokens += static_cast<uint32_t>(tokens_[i]);
  }
  response_->mutable_usage()->set_prompt_tokens(prompt_tokens);
  reactor_->Finish(shared::ToGrpcStatus(shared::Status::Ok()));
}

}  // namespace smallmind::worker
