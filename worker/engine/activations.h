// Activations: every buffer one engine step needs, sized once for the engine's limits so Step()
// never allocates. Owned by one Engine; the threads of its step write disjoint rows (and each its
// own scratch row); not otherwise thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/kernels.h"
#include "worker/types/model_config.h"

namespace smallmind::worker {

// One unit of a step's attention: the (token, head) rows `rows` of plan seq `seq`, or of its KV
// heads `kv_heads` only (OpRunner::Attention).
struct AttentionItem {
  int seq;
  kernels::RowRange
      rows;  // (token, head) rows of the seq's args, whole tokens when kv_heads is set
  kernels::RowRange kv_heads = {0, 0};  // empty: every head; else only these KV heads' rows
};

struct Activations {
  Activations(const ModelConfig& config, int max_step_tokens, int max_seqs, int max_threads);

  int max_tokens;
  int max_seqs;
  int max_threads;
  std::vector<float> x;            // [max_tokens, dim] residual stream
  std::vector<float> xb;           // [max_tokens, dim] normed input / attention output
  std::vector<float> xb2;          // [max_tokens, dim] output of wo and of w2
  std::vector<float> q;            // [max_tokens, dim] queries
  std::vector<float> k;            // [max_tokens, kv_dim] keys of this step's tokens
  std::vector<float> v;            // [max_tokens, kv_dim] values of this step's tokens
  std::vector<float> hb;           // [max_tokens, hidden_dim] gate, then silu(gate) * up
  std::vector<float> hb2;          // [max_tokens, hidden_dim] up
  std::vector<uint8_t> xq;         // [max_tokens, Q8ActRowBytes(max(dim, hidden_dim))] Q8 input
  std::vector<uint8_t> xq_octets;  // Q8 input as octets (Q8ActOctetsBytes), for kQ8Octets ops
  // [max_threads, scores_per_thread] attention scores scratch: per thread, rows of up to
  // context_length floats for a prefill tile (activations.cc says how many)
  std::vector<float> scores;
  int64_t scores_per_thread;
  std::vector<int32_t> token_ids;                 // [max_tokens] token id of each token of the step
  std::vector<int32_t> positions;                 // [max_tokens] position of each token of the step
  std::vector<kernels::AttentionArgs> attention;  // [max_seqs] per-seq attention of one layer
  // [max(max_tokens, 8 * max_threads)] the attention's work items: whole tokens of one seq each
  // (so a kernel call can share each K/V row among them), or runs of one token's heads, in order
  std::vector<AttentionItem> attention_items;
  std::vector<AttentionItem> attention_items_dealt;  // as many: OpRunner reorders items through it
  std::vector<float> last_x;    // [max_seqs, dim] final state of each last token that wants logits
  std::vector<float> logits;    // [max_seqs, vocab_size], compacted: row i is the i-th wanting seq
  std::vector<int> logits_row;  // [max_seqs] row of `logits` for each seq of the step, -1 if none
};

}  // namespace smallmind::worker
