// EmbedInputs: runs whole inputs through an Engine the way the worker batches an embedding
// request (every input one plan seq, all in one step, pooled as the model or the caller says),
// for the embedding conformance and determinism tests. Header-only test helper; not thread-safe.
#pragma once

#include <memory>
#include <vector>

#include "worker/engine/engine.h"
#include "worker/kv/kv_pool.h"

namespace smallmind::worker::testing {

struct EmbedOptions {
  kernels::ExecMode mode = kernels::ExecMode::kDeterministic;
  int threads = 1;
  PoolingType pooling = PoolingType::kNone;  // kNone: the model's
};

// One engine step over `inputs` (token ids, [CLS]/[SEP] or BOS included); each input's pooled
// embedding, not normalised. A decoder's inputs get K/V blocks of their own.
inline std::vector<std::vector<float>> EmbedInputs(const LlamaModel& model,
                                                   const std::vector<std::vector<TokenId>>& inputs,
                                                   const EmbedOptions& o) {
  constexpr int kBlockSize = 16;
  int total = 0, blocks = 0;
  for (const auto& in : inputs) {
    total += static_cast<int>(in.size());
    blocks += (static_cast<int>(in.size()) + kBlockSize - 1) / kBlockSize;
  }
  KvPool kv(model.config, std::max(1, blocks), kBlockSize);
  EngineOptions eo;
  eo.max_step_tokens = std::max(1, total);
  eo.max_seqs = std::max(1, static_cast<int>(inputs.size()));
  eo.num_threads = o.threads;
  eo.parallel_threshold = 1;  // split every op that can be split: the most thread-dependent run
  Engine engine(model.config, model.weights, &kv, eo);
  const PoolingType pooling = o.pooling != PoolingType::kNone ? o.pooling : model.config.pooling;
  std::vector<std::vector<int32_t>> tables(inputs.size());
  StepPlan plan;
  plan.mode = o.mode;
  int next_block = 0;
  for (size_t i = 0; i < inputs.size(); i++) {
    const int n = static_cast<int>(inputs[i].size());
    if (!model.config.encoder) {
      for (int b = 0; b < (n + kBlockSize - 1) / kBlockSize; b++) tables[i].push_back(next_block++);
    }
    SeqStep seq{inputs[i], 0, tables[i], false};
    seq.embed = pooling;
    plan.seqs.push_back(seq);
  }
  engine.Step(plan);
  std::vector<std::vector<float>> out;
  for (size_t i = 0; i < inputs.size(); i++) {
    const std::span<const float> e = engine.Embedding(static_cast<int>(i));
    out.emplace_back(e.begin(), e.end());
  }
  return out;
}

}  // namespace smallmind::worker::testing
