// RunOfflineBench: `smallmind bench --offline`, the engine measured in-process without gRPC, shaped
// like llama-bench so the figures sit side by side: pp128 (a 128-token prompt prefilled in one
// step) and tg64 (64 single-stream decode steps from an empty context), per kernel path and thread
// count, plus the KV cache's worth: 50 new tokens after the prompt recomputed from scratch each
// time vs 50 cached decode steps. Single-threaded caller; the engine uses its own pool.
#pragma once

#include <string>
#include <vector>

#include "kernels/exec_mode.h"
#include "kernels/kernels.h"
#include "shared/default_model.h"
#include "shared/status.h"

namespace smallmind::cli {

struct OfflineBenchOptions {
  std::string model = shared::kDefaultModel;  // anything the worker's --model accepts
  std::string tokenizer;                      // llama2.c checkpoints only
  std::vector<int> threads = {1, 2};
  std::vector<kernels::ExecMode> modes = {kernels::ExecMode::kParallel,
                                          kernels::ExecMode::kDeterministic};
  int repetitions = 3;                              // best of
  kernels::KvType kv_type = kernels::KvType::kF16;  // --kv-dtype, the worker's default
  bool recompute = true;
};

// Prints one table row per (path, threads) to stdout as it goes.
shared::Status RunOfflineBench(const OfflineBenchOptions& options);

}  // namespace smallmind::cli
