// Worker: everything one worker process runs, built from a WorkerConfig: the model, the KV pool,
// the engine, the scheduler thread, the output pump thread and the worker.proto server. main()
// builds exactly one; tests may build several in one process. Start/Shutdown from one controlling
// thread; not thread-safe.
#pragma once

#include <memory>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "shared/status.h"
#include "worker/engine/engine.h"
#include "worker/engine/engine_loop.h"
#include "worker/kv/block_pool.h"
#include "worker/kv/kv_pool.h"
#include "worker/kv/kv_segment.h"
#include "worker/loader/model_loader.h"
#include "worker/output_pump.h"
#include "worker/request_lanes.h"
#include "worker/sched/command_queue.h"
#include "worker/sched/output_queue.h"
#include "worker/sched/scheduler.h"
#include "worker/worker_config.h"
#include "worker/worker_service.h"

namespace smallmind::worker {

class Worker {
 public:
  explicit Worker(WorkerConfig config);
  ~Worker();

  // Loads the model, plans memory, starts the scheduler thread and the server. Errors name what
  // failed (model file, socket, CPU set).
  shared::Status Start();
  // Blocks until Shutdown() is called from elsewhere.
  void Wait();
  // Stops accepting, lets in-flight streams finish for a grace period, then cancels the rest and
  // joins the scheduler thread. Idempotent.
  void Shutdown();

  const LoadedModel& model() const { return *model_; }

 private:
  // Sizes the KV pool and opens its segment (re-attaching a predecessor's), before the engine.
  shared::Status LoadModelTimed();
  shared::Status PlanKv();
  // --kv-segment as given, or a standalone worker's recorded random name (and its name file).
  shared::Result<std::string> SegmentName();
  EngineOptions BuildEngine();
  // --draft-model: loads it, refuses another vocabulary, sizes its KV pool out of the budget
  // (before PlanKv); BuildDraft then runs it on the engine's threads.
  shared::Status LoadDraftModel();
  void BuildDraft();
  shared::Status StartService(const EngineOptions& engine_options);
  // After the engine: the prefix cache's chain roots and the block pool, which keeps the cached
  // blocks of a re-attached segment.
  void AdoptKvBlocks();
  void SchedulerThreadMain();

  WorkerConfig config_;
  std::vector<int> cpus_;
  std::unique_ptr<LoadedModel> model_;
  uint64_t model_fingerprint_ = 0;
  // A standalone worker's name file (worker/kv/segment_name_file.h); both "" otherwise.
  std::string kv_name_dir_;
  std::string kv_name_base_;
  std::unique_ptr<KvSegment> kv_segment_;  // outlives the pools and the engine that point into it
  std::unique_ptr<KvPool> kv_pool_;
  std::unique_ptr<BlockPool> block_pool_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<LoadedModel> draft_model_;  // --draft-model, or null
  int draft_blocks_ = 0;
  std::unique_ptr<DraftModel> draft_;  // before the scheduler, whose sequences hold its blocks
  std::unique_ptr<Scheduler> scheduler_;
  CommandQueue commands_;
  OutputQueue outputs_;
  SchedulerStats stats_;
  std::unique_ptr<EngineLoop> loop_;
  std::unique_ptr<OutputPump> pump_;
  RequestLanes lanes_;  // stopped after the server, before the scheduler
  std::unique_ptr<WorkerService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::thread scheduler_thread_;
  bool shut_down_ = false;
};

}  // namespace smallmind::worker
