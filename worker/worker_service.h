// WorkerService: the worker.proto server (Submit, Tokenize, GetModelInfo, Stats, Embed) over the
// callback API. Submit streams are SubmitReactors; Submit's and Tokenize's tokenizing runs on
// RequestLanes, so the gRPC threads only answer GetModelInfo and Stats inline from read-only state
// and atomics, however big the prompts (issue 40). Thread-safe: called on gRPC threads.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "smallmind/v1/worker.grpc.pb.h"
#include "worker/loader/model_loader.h"
#include "worker/request_lanes.h"
#include "worker/run_facts.h"
#include "worker/sched/command_queue.h"
#include "worker/sched/scheduler_stats.h"

namespace smallmind::worker {

class WorkerService final : public v1::Worker::CallbackService {
 public:
  // `lanes` runs the request work; it must outlive every call (Worker stops it after the server).
  // `weight_memory`: where the model's weights lie (the loaded storage, the packed copies), for
  // smallmind_worker_weights_resident_bytes; it must outlive the service.
  WorkerService(const LoadedModel& model, RunFacts facts, CommandQueue* commands,
                RequestLanes* lanes, const SchedulerStats* stats, int worker_id,
                std::vector<std::span<const std::byte>> weight_memory = {});

  grpc::ServerWriteReactor<v1::SubmitResponse>* Submit(grpc::CallbackServerContext* context,
                                                       const v1::SubmitRequest* request) override;
  grpc::ServerUnaryReactor* Tokenize(grpc::CallbackServerContext* context,
                                     const v1::TokenizeRequest* request,
                                     v1::TokenizeResponse* response) override;
  grpc::ServerUnaryReactor* GetModelInfo(grpc::CallbackServerContext* context,
                                         const v1::GetModelInfoRequest* request,
                                         v1::ModelInfo* response) override;
  grpc::ServerUnaryReactor* Stats(grpc::CallbackServerContext* context,
                                  const v1::StatsRequest* request,
                                  v1::WorkerStats* response) override;
  // Tokenizes on a request lane, then an EmbedJob runs the inputs through the scheduler.
  grpc::ServerUnaryReactor* Embed(grpc::CallbackServerContext* context,
                                  const v1::EmbedWork* request,
                                  v1::EmbedResponse* response) override;

 private:
  const LoadedModel& model_;
  const RunFacts facts_;  // for the determinism receipts
  CommandQueue* commands_;
  RequestLanes* lanes_;
  const SchedulerStats* stats_;
  const int worker_id_;
  const std::vector<std::span<const std::byte>> weight_memory_;
  const uint64_t start_time_unix_ms_;  // Stats.start_time_unix_ms: set once, at construction
  std::atomic<uint64_t> next_sequence_id_{1};
};

// Fills `info` from the model (workers = 1; the gateway overwrites it).
void FillModelInfo(const LoadedModel& model, v1::ModelInfo* info);

}  // namespace smallmind::worker
