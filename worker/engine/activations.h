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
#include "worker/model/tensor_view.h"
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

// One matmul of a step's grouped expert matmuls (OpRunner::ExpertMatmuls): rows [first_row,
// first_row + n_rows) of the shared input times expert matrix w, into y: [n_rows, w->rows].
struct ExpertMatmul {
  const TensorView* w = nullptr;
  int first_row = 0;
  int n_rows = 0;
  float* y = nullptr;
};

struct Activations {
  // max_logit_rows: logits rows one step may ask for (>= max_seqs; more for speculative
  // verification, which wants a row per fed token).
  Activations(const ModelConfig& config, int max_step_tokens, int max_seqs, int max_threads,
              int max_logit_rows);

  int max_tokens;
  int max_seqs;
  int max_threads;
  int max_logit_rows;
  // Rows a matmul input may have (the Q8 buffers' rows): max_tokens, or a mixture of experts'
  // routed rows, max_tokens * n_experts_used.
  int max_source_rows;
  shared::HugeRegion arena;  // every span below up to logits; zero-filled
  std::span<float> x;        // [max_tokens, dim] residual stream
  std::span<float> xb;       // [max_tokens, max(dim, q_dim)] normed input / attention out
  std::span<float> xb2;      // [max_tokens, dim] output of wo and of w2
  std::span<float> q;        // [max_tokens, q_dim] queries
  std::span<float> k;        // [max_tokens, kv_dim] keys of this step's tokens
  std::span<float> v;        // [max_tokens, kv_dim] values of this step's tokens
  // [max_tokens, max(hidden_dim, shared_expert_ffn_dim)] gate, then silu(gate) * up
  std::span<float> hb;
  std::span<float> hb2;  // as many: up
  // [max_source_rows, Q8ActRowBytes(widest)] (widest of dim, q_dim, hidden, the experts' ffns)
  std::span<uint8_t> xq;
  std::span<uint8_t> xq_1;  // as many: the input as kQ8_1 rows (Q4_1 / Q5_1 matmuls)
  std::span<uint8_t> xq_k;  // as many: the input as kQ8K rows (the K-quants' matmuls)
  // Q8 input as octets (Q8ActOctetsBytes), for kQ8Octets ops: max_source_rows, and with experts
  // room for every expert's rows to start a whole octet
  std::span<uint8_t> xq_octets;
  // [max_threads, scores_per_thread] attention scores scratch: per thread, rows of up to
  // context_length floats for a prefill tile (activations.cc says how many)
  std::span<float> scores;
  int64_t scores_per_thread;
  std::vector<int32_t> token_ids;  // [max_tokens] token id of each token of the step
  std::vector<int32_t> positions;  // [max_tokens] position of each token of the step
  // [max_seqs] per-seq attention of one layer; an encoder's [max(max_seqs, max_tokens)]: per token
  std::vector<kernels::AttentionArgs> attention;
  // [max(max_tokens, 8 * max_threads)] the attention's work items: whole tokens of one seq each
  // (so a kernel call can share each K/V row among them), or runs of one token's heads, in order
  std::vector<AttentionItem> attention_items;
  std::vector<AttentionItem> attention_items_dealt;  // as many: OpRunner reorders items through it
  std::span<float> last_x;  // [max_logit_rows, dim] final state of each token wanting logits
  std::span<float> logits;  // [max_logit_rows, vocab_size], compacted in plan order (encoder: none)
  // [max_seqs, dim] the pooled embedding of each seq whose SeqStep::embed asks one, by plan index
  std::span<float> pooled;
  // Mixture of experts (config.moe(); empty otherwise): MoeFfn's scratch, with R =
  // max_source_rows routed (token, expert) rows, grouped by expert.
  std::span<float> router_probs;  // [max_tokens, n_experts] router scores, then probabilities
  std::span<float> moe_x;         // [R, dim] each routed row's input
  std::span<float> moe_gate;      // [R, expert_ffn_dim] gate, then silu(gate) * up
  std::span<float> moe_up;        // [R, expert_ffn_dim]
  std::span<float> moe_y;         // [R, dim] each routed row's expert output
  // A shared expert (config.shared_expert_ffn_dim > 0; empty otherwise), its FFN in hb / hb2:
  std::span<float> shexp_out;          // [max_tokens, dim] its output
  std::span<float> shexp_gate;         // [max_tokens] its gate's logit, then sigmoid of it
  std::vector<int32_t> moe_expert;     // [max_tokens * n_experts_used] expert of (token, slot)
  std::vector<float> moe_weight;       // as many: its router weight
  std::vector<int32_t> moe_row;        // as many: its row of moe_x / moe_y
  std::vector<int32_t> moe_first;      // [n_experts + 1] first routed row of each expert's group
  std::vector<ExpertMatmul> moe_jobs;  // [2 * n_experts] the expert matmuls of one region
  // [max_seqs] first row of `logits` for each seq of the step (its logits_tokens rows follow),
  // -1 if none
  std::vector<int> logits_row;

 private:
  void SizeStepIndex(bool encoder);
  void SizeMoeIndex(size_t routed, size_t experts);
};

}  // namespace smallmind::worker
