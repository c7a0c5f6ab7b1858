// StepPlan: the scheduler's output and the engine's only input, one batched step of tokens for
// several sequences. Filled by Scheduler::Apply, read by Engine::Step on the same thread; plain
// data pointing into buffers the scheduler keeps alive until Step returns.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/exec_mode.h"
#include "worker/types/pooling_type.h"
#include "worker/types/token_id.h"

namespace smallmind::worker {

// One sequence's slice of a step.
struct SeqStep {
  std::span<const TokenId>
      tokens;  // tokens fed this step, at positions start_pos, start_pos+1, ...
  int start_pos = 0;
  std::span<const int32_t>
      block_table;           // KV block ids covering positions [0, start_pos + tokens.size())
  bool want_logits = false;  // compute logits of the last token(s) of this slice
  // With want_logits: how many of the slice's last tokens get logits (1 <= this <= tokens.size()):
  // a speculative verification step wants one row per fed token.
  int logits_tokens = 1;
  // Not kNone: the slice ends the input and the engine pools its embedding (Engine::Embedding):
  // an encoder's whole input (start_pos 0) by mean, [CLS] or last token; a decoder's last token's
  // final-normed state (kLast only).
  PoolingType embed = PoolingType::kNone;
};

struct StepPlan {
  std::vector<SeqStep> seqs;
  kernels::ExecMode mode = kernels::ExecMode::kParallel;
  int max_threads = 0;         // 0 = the engine's default (all its threads)
  int parallel_threshold = 0;  // ops with fewer rows than this run on one thread; 0 = engine's
};

}  // namespace smallmind::worker
