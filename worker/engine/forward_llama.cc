#include "worker/engine/forward_llama.h"

#include <algorithm>
#include <cstdint>

namespace smallmind::worker {
namespace {

using kernels::AllRows;
using kernels::RowRange;

// y[t, :] = w . x[t, :] for the first n tokens, with the table's matmul for w's type.
void Matmul(const kernels::KernelTable& k, const TensorView& w, const float* x, float* y, int n) {
  k.MatmulFor(w.type)(w.data, x, y, n, static_cast<int>(w.cols), static_cast<int>(w.rows),
                      AllRows(static_cast<int>(w.rows)));
}

kernels::RopeLayout Layout(RopeStyle style) {
  return style == RopeStyle::kNeox ? kernels::RopeLayout::kNeox : kernels::RopeLayout::kInterleaved;
}

// x[t, :] = embedding row of the t-th token of the step (seqs in order); positions[t] = its
// position. Returns the number of tokens.
int EmbedTokens(const LlamaForwardContext& m, const StepPlan& plan, Activations* a) {
  const int dim = m.config.dim;
  const float* embedding = m.weights.token_embedding.f32();  // [vocab_size, dim]
  int t = 0;
  for (const SeqStep& seq : plan.seqs) {
    for (size_t i = 0; i < seq.tokens.size(); i++, t++) {
      const float* row = embedding + static_cast<int64_t>(seq.tokens[i]) * dim;
      std::copy(row, row + dim, a->x.data() + static_cast<int64_t>(t) * dim);
      a->positions[t] = seq.start_pos + static_cast<int32_t>(i);
    }
  }
  return t;
}

// Copies the step's rotated keys and values of `layer` into each token's cache slot.
void StoreKv(const StepPlan& plan, int layer, const Activations& a, KvPool& kv) {
  const int kv_dim = kv.kv_dim();
  const int block_size = kv.block_size();
  int t = 0;
  for (const SeqStep& seq : plan.seqs) {
    for (size_t i = 0; i < seq.tokens.size(); i++, t++) {
      const int pos = seq.start_pos + static_cast<int>(i);
      const int32_t block = seq.block_table[pos / block_size];
      const float* k = a.k.data() + static_cast<int64_t>(t) * kv_dim;  // [kv_dim]
      const float* v = a.v.data() + static_cast<int64_t>(t) * kv_dim;  // [kv_dim]
      std::copy(k, k + kv_dim, kv.KRow(block, layer, pos % block_size));
      std::copy(v, v + kv_dim, kv.VRow(block, layer, pos % block_size));
    }
  }
}

// xb[t, :] = causal attention of q[t, :] over its own sequence's cache, one sequence at a time.
void Attend(const LlamaForwardContext& m, const StepPlan& plan, int layer, Activations* a) {
  const ModelConfig& c = m.config;
  int t = 0;  // first token of the current sequence
  for (const SeqStep& seq : plan.seqs) {
    const int n = static_cast<int>(seq.tokens.size());
    kernels::AttentionArgs args;
    args.q = a->q.data() + static_cast<int64_t>(t) * c.dim;
    args.out = a->xb.data() + static_cast<int64_t>(t) * c.dim;
    args.scores = a->scores.data();
    args.n_tokens = n;
    args.start_pos = seq.start_pos;
    args.n_heads = c.n_heads;
    args.n_kv_heads = c.n_kv_heads;
    args.head_dim = c.head_dim();
    args.kv = m.kv.LayerView(layer, seq.block_table);
    m.kernels.attention(args, AllRows(n * c.n_heads));
    t += n;
  }
}

// For every seq that wants logits: logits row = classifier . rmsnorm(x of its last token).
void ComputeLogits(const LlamaForwardContext& m, const StepPlan& plan, Activations* a) {
  const int dim = m.config.dim;
  int t = 0;     // first token of the current sequence
  int rows = 0;  // sequences wanting logits so far
  for (size_t s = 0; s < plan.seqs.size(); s++) {
    const int n = static_cast<int>(plan.seqs[s].tokens.size());
    a->logits_row[s] = -1;
    if (plan.seqs[s].want_logits) {
      const float* last = a->x.data() + static_cast<int64_t>(t + n - 1) * dim;  // [dim]
      std::copy(last, last + dim, a->last_x.data() + static_cast<int64_t>(rows) * dim);
      a->logits_row[s] = rows++;
    }
    t += n;
  }
  if (rows == 0) return;
  m.kernels.rmsnorm(a->last_x.data(), m.weights.final_norm.f32(), a->last_x.data(), dim,
                    m.config.rms_norm_eps, AllRows(rows));
  Matmul(m.kernels, m.weights.classifier, a->last_x.data(), a->logits.data(), rows);
}

}  // namespace

void ForwardLlama(const LlamaForwardContext& m, const StepPlan& plan, Activations* a) {
  const ModelConfig& c = m.config;
  const kernels::KernelTable& k = m.kernels;
  const kernels::RopeLayout rope = Layout(c.rope_style);
  const int n = EmbedTokens(m, plan, a);  // x = token embeddings
  const RowRange tokens = AllRows(n);
  float* x = a->x.data();      // [n, dim]
  float* xb = a->xb.data();    // [n, dim]
  float* xb2 = a->xb2.data();  // [n, dim]
  float* hb = a->hb.data();    // [n, hidden_dim]
  float* hb2 = a->hb2.data();  // [n, hidden_dim]

  for (int l = 0; l < c.n_layers; l++) {
    const LayerWeights& w = m.weights.layers[l];

    // Attention: qkv of the normed input, rotate q and k, cache k and v, attend, project, add.
    k.rmsnorm(x, w.attn_norm.f32(), xb, c.dim, c.rms_norm_eps, tokens);
    Matmul(k, w.wq, xb, a->q.data(), n);
    Matmul(k, w.wk, xb, a->k.data(), n);
    Matmul(k, w.wv, xb, a->v.data(), n);
    k.rope(a->q.data(), a->positions.data(), c.n_heads, c.head_dim(), c.rope_theta, rope,
           AllRows(n * c.n_heads));
    k.rope(a->k.data(), a->positions.data(), c.n_kv_heads, c.head_dim(), c.rope_theta, rope,
           AllRows(n * c.n_kv_heads));
    StoreKv(plan, l, *a, m.kv);
    Attend(m, plan, l, a);  // xb = attention output
    Matmul(k, w.wo, xb, xb2, n);
    k.add(x, xb2, c.dim, tokens);

    // Feed-forward: x += w2 . (silu(w1 . xb) * (w3 . xb)) with xb the normed input.
    k.rmsnorm(x, w.ffn_norm.f32(), xb, c.dim, c.rms_norm_eps, tokens);
    Matmul(k, w.w1, xb, hb, n);
    Matmul(k, w.w3, xb, hb2, n);
    k.swiglu(hb, hb2, c.hidden_dim, tokens);
    Matmul(k, w.w2, hb, xb2, n);
    k.add(x, xb2, c.dim, tokens);
  }

  ComputeLogits(m, plan, a);  // final norm and classifier, last token of each seq that asks
}

}  // namespace smallmind::worker
