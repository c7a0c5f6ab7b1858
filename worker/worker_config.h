// WorkerConfig: every option of a worker process, with defaults in place; parsed once in main()
// (ParseWorkerFlags) and checked by Validate(). Plain data.
#pragma once

#include <string>

#include "kernels/dispatch.h"
#include "kernels/kernels.h"
#include "shared/status.h"
#include "worker/loader/model_loader.h"
#include "worker/sched/scheduler.h"

namespace smallmind::worker {

struct WorkerConfig {
  ModelSpec model;
  std::string listen = "unix:/tmp/smallmind-worker.sock";  // unix:/path or host:port
  int worker_id = 0;
  std::string cpus;                        // "0-3"; empty = every CPU this process may use
  int threads = 0;                         // compute threads; 0 = one per CPU of the set
  kernels::Isa isa = kernels::Isa::kBest;  // kernel set; kBest: the best this CPU runs
  std::string log_level = "info";
  bool exit_with_parent = false;  // SIGTERM when the parent dies (set by the gateway supervisor)
  struct Kv {
    int block_size = 16;                            // tokens per KV block
    int num_blocks = 0;                             // 0 = derive from memory_mb
    int memory_mb = 1024;                           // KV pool budget when num_blocks = 0
    kernels::KvType dtype = kernels::KvType::kF16;  // element type of the cached K/V rows
    // Shared-memory segment of the pool: "" = derived from `listen` (KvSegmentNameFor), "none" =
    // process memory (no warm restart). The gateway passes smallmind-<gateway id>-w<worker id>.
    std::string segment;
    // Standalone workers (segment ""): where smallmind-kv-<uid>/ (mode 0700) keeps the name of
    // the segment, whose random part a warm restart reads back. "" = $TMPDIR, else /tmp.
    std::string runtime_dir;
  } kv;
  SchedulerOptions scheduler;
  // Speculative decoding's draft model (--draft-model; "" = none): a model with the target's
  // vocabulary, in its own KV pool of draft_kv_memory_mb MiB taken out of kv.memory_mb (0 = full
  // draft contexts for speculation.max_batch streams, at most a quarter of the budget).
  ModelSpec draft_model{.model = "", .tokenizer = ""};
  int draft_kv_memory_mb = 0;
  // A draft step's cost over a target step, for the draft-length controllers (--spec-draft-cost;
  // < 0: the ratio of the two models' weight bytes, DraftStepCost).
  double draft_step_cost = -1.0;

  shared::Status Validate() const;
};

// Parses argv into a config. On --help prints usage and returns a NotFound status with the usage
// text as message (main exits 0 then).
shared::Result<WorkerConfig> ParseWorkerFlags(int argc, char** argv);

}  // namespace smallmind::worker
