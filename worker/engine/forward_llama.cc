#include "worker/engine/forward_llama.h"

#include <algorithm>
#include <cstdint>

namespace smallmind::worker {
namespace {

kernels::RopeLayout Layout(RopeStyle style) {
  return style == RopeStyle::kNeox ? kernels::RopeLayout::kNeox : kernels::RopeLayout::kInterleaved;
}

// The step's token ids in order (seqs one after another) into `ids` and their positions into
// act->positions. Returns the number of tokens.
int GatherTokens(const StepPlan& plan, Activations* a, int32_t* ids) {
  int t = 0;
  for (const SeqStep& seq : plan.seqs) {
    for (size_t i = 0; i < seq.tokens.size(); i++, t++) {
      ids[t] = seq.tokens[i];
      a->positions[t] = seq.start_pos + static_cast<int32_t>(i);
    }
  }
  return t;
}

// Copies the step's rotated keys and values of `layer` into each token's cache slot.
void StoreKv(const StepPlan& plan, int layer, const Activations& a, const OpRunner& ops,
             KvPool& kv) {
  const OpTimer timer(ops.profile(), OpKind::kStoreKv);
  const int kv_dim = kv.kv_dim();
  const int block_size = kv.block_size();
  int t = 0;
  for (const SeqStep& seq : plan.seqs) {
    for (size_t i = 0; i < seq.tokens.size(); i++, t++) {
      const int pos = seq.start_pos + static_cast<int>(i);
      const int32_t block = seq.block_table[pos / block_size];
      const float* k = a.k.data() + static_cast<int64_t>(t) * kv_dim;  // [kv_dim]
      const float* v = a.v.data() + static_cast<int64_t>(t) * kv_dim;  // [kv_dim]
      kv.StoreRow(block, layer, pos % block_size, k, v, ops.table());
    }
  }
}

// xb[t, :] = causal attention of q[t, :] over its own sequence's cache, all seqs at once.
void Attend(const LlamaForwardContext& m, const StepPlan& plan, int layer, OpRunner& ops,
            Activations* a) {
  const ModelConfig& c = m.config;
  int t = 0;  // first token of the current sequence
  for (size_t s = 0; s < plan.seqs.size(); s++) {
    const SeqStep& seq = plan.seqs[s];
    const int n = static_cast<int>(seq.tokens.size());
    kernels::AttentionArgs& args = a->attention[s];
    args.q = a->q.data() + static_cast<int64_t>(t) * c.dim;
    args.out = a->xb.data() + static_cast<int64_t>(t) * c.dim;
    args.n_tokens = n;
    args.start_pos = seq.start_pos;
    args.n_heads = c.n_heads;
    args.n_kv_heads = c.n_kv_heads;
    args.head_dim = c.head_dim();
    args.kv = m.kv.LayerView(layer, seq.block_table);
    t += n;
  }
  ops.Attention(std::span<const kernels::AttentionArgs>(a->attention).first(plan.seqs.size()));
}

// For every seq that wants logits: logits row = classifier . rmsnorm(x of its last token).
void ComputeLogits(const LlamaForwardContext& m, const StepPlan& plan, OpRunner& ops,
                   Activations* a) {
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
  float* last_x = a->last_x.data();  // [rows, dim]
  ops.RmsNorm(last_x, m.weights.final_norm, last_x, rows, dim, m.config.rms_norm_eps);
  MatmulSource in = OpRunner::Source(last_x, rows, dim);
  ops.Matmul(m.weights.classifier, &in, a->logits.data());
}

}  // namespace

void ForwardLlama(const LlamaForwardContext& m, const StepPlan& plan, OpRunner& ops,
                  Activations* a) {
  const ModelConfig& c = m.config;
  const kernels::RopeLayout rope = Layout(c.rope_style);
  const kernels::RopeFreqs freqs{
      .theta = c.rope_theta,
      .scale = c.rope_freq_scale,
      .factors = m.weights.rope_freqs.present() ? m.weights.rope_freqs.f32() : nullptr};
  const float eps = c.rms_norm_eps;
  float* x = a->x.data();      // [n, dim]
  float* xb = a->xb.data();    // [n, dim]
  float* xb2 = a->xb2.data();  // [n, dim]
  float* q = a->q.data();      // [n, dim]
  float* k = a->k.data();      // [n, kv_dim]
  float* v = a->v.data();      // [n, kv_dim]
  float* hb = a->hb.data();    // [n, hidden_dim]
  float* hb2 = a->hb2.data();  // [n, hidden_dim]
  const int n = GatherTokens(plan, a, a->token_ids.data());
  ops.Embed(m.weights.token_embedding, std::span<const int32_t>(a->token_ids).first(n), x);

  for (int l = 0; l < c.n_layers; l++) {
    const LayerWeights& w = m.weights.layers[l];

    // Attention: qkv of the normed input (+ biases), rotate q and k, cache k and v, attend,
    // project, add.
    ops.RmsNorm(x, w.attn_norm, xb, n, c.dim, eps);
    MatmulSource attn_in = OpRunner::Source(xb, n, c.dim);
    ops.Matmuls({{w.wq, q}, {w.wk, k}, {w.wv, v}}, &attn_in);
    if (w.bq.present()) ops.AddBias(q, w.bq, n);
    if (w.bk.present()) ops.AddBias(k, w.bk, n);
    if (w.bv.present()) ops.AddBias(v, w.bv, n);
    ops.Rope(q, a->positions.data(), n, c.n_heads, c.head_dim(), freqs, rope);
    ops.Rope(k, a->positions.data(), n, c.n_kv_heads, c.head_dim(), freqs, rope);
    StoreKv(plan, l, *a, ops, m.kv);
    Attend(m, plan, l, ops, a);  // xb = attention output
    MatmulSource attn_out = OpRunner::Source(xb, n, c.dim);
    ops.Matmul(w.wo, &attn_out, xb2);
    ops.Add(x, xb2, n, c.dim);

    // Feed-forward: x += w2 . (silu(w1 . xb) * (w3 . xb)) with xb the normed input.
    ops.RmsNorm(x, w.ffn_norm, xb, n, c.dim, eps);
    MatmulSource ffn_in = OpRunner::Source(xb, n, c.dim);
    ops.Matmuls({{w.w1, hb}, {w.w3, hb2}}, &ffn_in);
    ops.SwiGlu(hb, hb2, n, c.hidden_dim);
    MatmulSource ffn_hidden = OpRunner::Source(hb, n, c.hidden_dim);
    ops.Matmul(w.w2, &ffn_hidden, xb2);
    ops.Add(x, xb2, n, c.dim);
  }

  ComputeLogits(m, plan, ops, a);  // final norm and classifier, last token of each seq that asks
}

}  // namespace smallmind::worker
