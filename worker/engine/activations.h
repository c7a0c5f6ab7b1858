// Activations: every buffer one engine step needs, sized once for the engine's limits so Step()
// never allocates. Owned by one Engine; the threads of its step write disjoint rows (and each its
// own scratch row); not otherwise thread-safe.
//
// The float and byte buffers lie in one region on transparent huge pages (`arena`), each 4 KiB
// aligned, faulted in at construction: one TLB entry per 2 MiB for the scores scratch a prefill
// tile writes and reads again, and for the logits (worker/README.md, Memory: pp128 attention
// 3.24-3.46 -> 3.01-3.10 ms a step on a Zen 4 VM; the activation quantizer 213-217 -> 153-173 us
// at 16 streams).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/kernels.h"
#include "shared/huge_region.h"
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
  shared::HugeRegion arena;      // every span below up to logits; zero-filled
  std::span<float> x;            // [max_tokens, dim] residual stream
  std::span<float> xb;           // [max_tokens, dim] normed input / attention output
  std::span<float> xb2;          // [max_tokens, dim] output of wo and of w2
  std::span<float> q;            // [max_tokens, dim] queries
  std::span<float> k;            // [max_tokens, kv_dim] keys of this step's tokens
  std::span<float> v;            // [max_tokens, kv_dim] values of this step's tokens
  std::span<float> hb;           // [max_tokens, hidden_dim] gate, then silu(gate) * up
  std::span<float> hb2;          // [max_tokens, hidden_dim] up
  std::span<uint8_t> xq;         // [max_tokens, Q8ActRowBytes(max(dim, hidden_dim))] Q8 input
  std::span<uint8_t> xq_1;       // as many: the input as kQ8_1 rows (Q4_1 / Q5_1 matmuls)
  std::span<uint8_t> xq_k;       // as many: the input as kQ8K rows (the K-quants' matmuls)
  std::span<uint8_t> xq_octets;  // Q8 input as octets (Q8ActOctetsBytes), for kQ8Octets ops
  // [max_threads, scores_per_thread] attention scores scratch: per thread, rows of up to
  // context_length floats for a prefill tile (activations.cc says how many)
  std::span<float> scores;
  int64_t scores_per_thread;
  std::vector<int32_t> token_ids;                 // [max_tokens] token id of each token of the step
  std::vector<int32_t> positions;                 // [max_tokens] position of each token of the step
  std::vector<kernels::AttentionArgs> attention;  // [max_seqs] per-seq attention of one layer
  // [max(max_tokens, 8 * max_threads)] the attention's work items: whole tokens of one seq each
  // (so a kernel call can share each K/V row among them), or runs of one token's heads, in order
  std::vector<AttentionItem> attention_items;
  std::vector<AttentionItem> attention_items_dealt;  // as many: OpRunner reorders items through it
  std::span<float> last_x;      // [max_seqs, dim] final state of each last token that wants logits
  std::span<float> logits;      // [max_seqs, vocab_size], compacted: row i is the i-th wanting seq
  std::vector<int> logits_row;  // [max_seqs] row of `logits` for each seq of the step, -1 if none
};

}  // namespace smallmind::worker
