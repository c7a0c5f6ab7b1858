#include "worker/engine/forward_bert.h"

#include <algorithm>
#include <cstdint>

#include "worker/engine/pooling.h"
#include "worker/engine/rank_head.h"

namespace smallmind::worker {
namespace {

// Token ids into act->token_ids and positions (0.. within each input) into act->positions, seqs
// one after another. Returns the number of tokens.
int GatherInputs(const StepPlan& plan, Activations* a) {
  int t = 0;
  for (const SeqStep& seq : plan.seqs) {
    for (size_t i = 0; i < seq.tokens.size(); i++, t++) {
      a->token_ids[t] = seq.tokens[i];
      a->positions[t] = static_cast<int32_t>(i);
    }
  }
  return t;
}

// x = LayerNorm(token embedding + token type 0 + position embedding), as llama.cpp adds them.
void EmbedInputs(const ModelConfig& c, const Weights& w, int n, OpRunner& ops, Activations* a) {
  float* x = a->x.data();    // [n, dim]
  float* xb = a->xb.data();  // [n, dim] position embeddings
  ops.Embed(w.token_embedding, std::span<const int32_t>(a->token_ids).first(n), x);
  const TensorView type0{kernels::DType::kF32, w.token_types.data, 1, c.dim};  // "sentence A"
  ops.AddBias(x, type0, n);
  ops.Embed(w.position_embedding, std::span<const int32_t>(a->positions).first(n), xb);
  ops.Add(x, xb, n, c.dim);
  ops.LayerNorm(x, w.embedding_norm, w.embedding_norm_b, x, n, c.dim, c.layer_norm_eps);
}

// xb[t, :] = attention of q[t, :] over every token of its own input. The causal kernel is given
// one query token per call at the input's last position, so it sees all of the input's keys: the
// step's k and v rows viewed as a cache of one block.
void AttendBidirectional(const ModelConfig& c, const StepPlan& plan, OpRunner& ops,
                         Activations* a) {
  static constexpr int32_t kOneBlock[1] = {0};
  int t0 = 0;  // first token of the current input
  int calls = 0;
  for (const SeqStep& seq : plan.seqs) {
    const int n = static_cast<int>(seq.tokens.size());
    kernels::KvView kv;
    kv.k = a->k.data() + static_cast<int64_t>(t0) * c.kv_dim();
    kv.v = a->v.data() + static_cast<int64_t>(t0) * c.kv_dim();
    kv.type = kernels::KvType::kF32;
    kv.block_table = std::span<const int32_t>(kOneBlock);
    kv.block_size = n;
    kv.block_stride = 0;
    kv.row_stride = c.kv_dim();
    for (int i = 0; i < n; i++) {
      kernels::AttentionArgs& args = a->attention[calls++];
      args = kernels::AttentionArgs{};
      args.q = a->q.data() + static_cast<int64_t>(t0 + i) * c.q_dim();
      args.out = a->xb.data() + static_cast<int64_t>(t0 + i) * c.q_dim();
      args.n_tokens = 1;
      args.start_pos = n - 1;
      args.n_heads = c.n_heads;
      args.n_kv_heads = c.n_kv_heads;
      args.head_dim = c.head_dim();
      args.kv = kv;
    }
    t0 += n;
  }
  ops.Attention(std::span<const kernels::AttentionArgs>(a->attention).first(calls));
}

// Row s of act->pooled for every seq that asks: its pooling of x over its own tokens. A rank
// seq's [CLS] row is gathered into xb (row r for the r-th rank seq) for the head.
int PoolInputs(const ModelConfig& c, const StepPlan& plan, Activations* a) {
  int t0 = 0;
  int n_rank = 0;
  for (size_t s = 0; s < plan.seqs.size(); s++) {
    const SeqStep& seq = plan.seqs[s];
    const int n = static_cast<int>(seq.tokens.size());
    const float* hidden = a->x.data() + static_cast<int64_t>(t0) * c.dim;  // [n, dim]
    if (seq.embed == PoolingType::kRank) {
      PoolHidden(PoolingType::kCls, hidden, n, c.dim, a->xb.data() + int64_t{n_rank++} * c.dim);
    } else if (seq.embed != PoolingType::kNone) {
      PoolHidden(seq.embed, hidden, n, c.dim, a->pooled.data() + s * c.dim);
    }
    t0 += n;
  }
  return n_rank;
}

// The first rank_outputs values of row s of act->pooled for every rank seq: its head's scores
// of the [CLS] rows PoolInputs gathered.
void ScorePairs(const ModelConfig& c, const Weights& w, const StepPlan& plan, int n_rank,
                OpRunner& ops, Activations* a) {
  const float* scores = RankHead(c, w, n_rank, ops, a->xb.data(), a->xb2.data());
  int r = 0;
  for (size_t s = 0; s < plan.seqs.size(); s++) {
    if (plan.seqs[s].embed != PoolingType::kRank) continue;
    const float* row = scores + int64_t{r++} * c.rank_outputs;  // [rank_outputs]
    std::copy(row, row + c.rank_outputs, a->pooled.data() + s * c.dim);
  }
}

}  // namespace

void ForwardBert(const ModelConfig& c, const Weights& weights, const StepPlan& plan, OpRunner& ops,
                 Activations* a) {
  const float eps = c.layer_norm_eps;
  float* x = a->x.data();      // [n, dim] residual stream
  float* xb = a->xb.data();    // [n, q_dim] attention output
  float* xb2 = a->xb2.data();  // [n, dim] output of wo and of ffn_down
  float* q = a->q.data();      // [n, q_dim]
  float* k = a->k.data();      // [n, kv_dim]
  float* v = a->v.data();      // [n, kv_dim]
  float* hb = a->hb.data();    // [n, hidden_dim]
  const int n = GatherInputs(plan, a);
  EmbedInputs(c, weights, n, ops, a);

  for (int l = 0; l < c.n_layers; l++) {
    const LayerWeights& w = weights.layers[l];

    // Attention: biased q, k, v of x; attend within each input; project (+ bias), add to x and
    // LayerNorm the sum.
    MatmulSource attn_in = OpRunner::Source(x, n, c.dim);
    ops.Matmuls({{w.wq, q}, {w.wk, k}, {w.wv, v}}, &attn_in);
    ops.AddBias(q, w.bq, n);
    ops.AddBias(k, w.bk, n);
    ops.AddBias(v, w.bv, n);
    AttendBidirectional(c, plan, ops, a);  // xb = attention output
    MatmulSource attn_out = OpRunner::Source(xb, n, c.q_dim());
    ops.Matmul(w.wo, &attn_out, xb2);
    ops.AddBias(xb2, w.bo, n);
    ops.Add(x, xb2, n, c.dim);
    ops.LayerNorm(x, w.attn_out_norm, w.attn_out_norm_b, x, n, c.dim, eps);

    // Feed-forward: x = LayerNorm(x + down . gelu(up . x + b_up) + b_down).
    MatmulSource ffn_in = OpRunner::Source(x, n, c.dim);
    ops.Matmul(w.w3, &ffn_in, hb);
    ops.AddBias(hb, w.ffn_up_b, n);
    ops.Gelu(hb, n, c.hidden_dim);
    MatmulSource ffn_hidden = OpRunner::Source(hb, n, c.hidden_dim);
    ops.Matmul(w.w2, &ffn_hidden, xb2);
    ops.AddBias(xb2, w.ffn_down_b, n);
    ops.Add(x, xb2, n, c.dim);
    ops.LayerNorm(x, w.layer_out_norm, w.layer_out_norm_b, x, n, c.dim, eps);
  }

  const int n_rank = PoolInputs(c, plan, a);
  if (n_rank > 0) ScorePairs(c, weights, plan, n_rank, ops, a);
}

}  // namespace smallmind::worker
