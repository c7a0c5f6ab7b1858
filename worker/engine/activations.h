// Activations: every buffer one engine step needs, sized once for the engine's limits so Step()
// never allocates. Owned by one Engine; the threads of its step write disjoint rows (and each its
// own scratch row); not otherwise thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/kernels.h"
#include "worker/types/model_config.h"

namespace smallmind::worker {

struct Activations {
  Activations(const ModelConfig& config, int max_step_tokens, int max_seqs, int max_threads);

  int max_tokens;
  int max_seqs;
  int max_threads;
  std::vector<float> x;     // [max_tokens, dim] residual stream
  std::vector<float> xb;    // [max_tokens, dim] normed input / attention output
  std::vector<float> xb2;   // [max_tokens, dim] output of wo and of w2
  std::vector<float> q;     // [max_tokens, dim] queries
  std::vector<float> k;     // [max_tokens, kv_dim] keys of this step's tokens
  std::vector<float> v;     // [max_tokens, kv_dim] values of this step's tokens
  std::vector<float> hb;    // [max_tokens, hidden_dim] gate, then silu(gate) * up
  std::vector<float> hb2;   // [max_tokens, hidden_dim] up
  std::vector<uint8_t> xq;  // [max_tokens, Q8ActRowBytes(max(dim, hidden_dim))] Q8 input
  // [max_threads, kAttentionHeadsPerPass, context_length] attention scores scratch per thread
  std::vector<float> scores;
  std::vector<int32_t> token_ids;                 // [max_tokens] token id of each token of the step
  std::vector<int32_t> positions;                 // [max_tokens] position of each token of the step
  std::vector<kernels::AttentionArgs> attention;  // [max_seqs] per-seq attention of one layer
  std::vector<int> attention_rows;  // [max_seqs + 1] first (token, head) row of each seq
  std::vector<float> last_x;    // [max_seqs, dim] final state of each last token that wants logits
  std::vector<float> logits;    // [max_seqs, vocab_size], compacted: row i is the i-th wanting seq
  std::vector<int> logits_row;  // [max_seqs] row of `logits` for each seq of the step, -1 if none
};

}  // namespace smallmind::worker
