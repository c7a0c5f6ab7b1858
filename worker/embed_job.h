// EmbedJob: one Embed call inside the worker: its inputs as sequences of the scheduler (pushed in
// one command round, so they are scheduled together), one SequenceSink per input collecting the
// pooled vectors, and, once the last input finished, the response: each vector truncated to the
// asked dimensions and L2-normalised (a rerank's scores as they are), usage and worker id, then
// the call finished; CANCELLED when its reactor heard the call cancelled (EmbedReactor pushes the
// sequences' cancels). Built on a request lane; its sinks are called by the output pump thread
// only. Deletes itself after its last input's OnFinish (or at once when nothing reached the
// scheduler).
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "smallmind/v1/worker.pb.h"
#include "worker/embed_reactor.h"
#include "worker/loader/model_loader.h"
#include "worker/sequence_sink.h"

namespace smallmind::worker {

class EmbedJob {
 public:
  // Builds the inputs (BuildEmbedRequests) and hands them to the scheduler through `reactor`
  // (EmbedReactor::PushSequences), or finishes `reactor` with the error (CANCELLED when it was
  // cancelled meanwhile). `work` and `response` are gRPC's, valid until the reactor finished.
  // `next_sequence_id` hands out the sequences' ids.
  static void Start(const v1::EmbedWork& work, const LoadedModel& model,
                    std::atomic<uint64_t>* next_sequence_id, int worker_id, EmbedReactor* reactor,
                    v1::EmbedResponse* response);

 private:
  // The sink of input `index`.
  class InputSink final : public SequenceSink {
   public:
    InputSink(EmbedJob* job, int index) : job_(job), index_(index) {}
    void OnTokens(const TokenEvent&) override {}  // an embedding generates nothing
    void OnFinish(const FinishEvent& event) override { job_->OnInputDone(index_, event); }

   private:
    EmbedJob* job_;
    int index_;
  };

  EmbedJob(int n_inputs, int dimensions, bool rerank, EmbedReactor* reactor,
           v1::EmbedResponse* response);
  void OnInputDone(int index, const FinishEvent& event);
  // Fills the response from every input's event and finishes the call.
  void Complete();

  const int dimensions_;
  const bool rerank_;  // the values are a reranker's scores: kept as they are
  EmbedReactor* const reactor_;
  v1::EmbedResponse* const response_;
  std::vector<std::unique_ptr<InputSink>> sinks_;  // [inputs]
  std::vector<std::vector<float>> vectors_;        // [inputs] pooled, then normalised
  std::vector<int> tokens_;                        // [inputs] tokens each was embedded as
  shared::Status first_error_;  // the first input that failed (the call fails with it)
  int remaining_;               // inputs not finished; the pump thread only
};

}  // namespace smallmind::worker
