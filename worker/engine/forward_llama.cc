#include "worker/engine/forward_llama.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "worker/engine/moe_ffn.h"

namespace smallmind::worker {
namespace {

kernels::RopeLayout Layout(RopeStyle style) {
  return style == RopeStyle::kNeox ? kernels::RopeLayout::kNeox : kernels::RopeLayout::kInterleaved;
}

// The RoPE frequencies of `layer`: its base and linear scale (windowed layers may have their
// own), per-pair factors (rope_freqs, LongRoPE's, or YaRN's with the scale folded in), rotated
// dims (partial rotary) and the attention factor.
kernels::RopeFreqs LayerRopeFreqs(const LlamaForwardContext& m, int layer) {
  const ModelConfig& c = m.config;
  kernels::RopeFreqs freqs{
      .theta = c.LayerRopeTheta(layer),
      .scale = c.LayerRopeFreqScale(layer),
      .factors = m.weights.rope_freqs.present() ? m.weights.rope_freqs.f32() : nullptr,
      .rot_dims = c.rope_dims,
      .mscale = c.rope_attn_factor};
  if (c.rope_yarn) {
    const std::vector<float>& swa = m.weights.yarn_factors_swa;
    const bool own = c.LayerWindow(layer) > 0 && !swa.empty();
    freqs.factors = own ? swa.data() : m.weights.yarn_factors.data();
    freqs.scale = 1.0f;
  }
  return freqs;
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
    args.q = a->q.data() + static_cast<int64_t>(t) * c.q_dim();
    args.out = a->xb.data() + static_cast<int64_t>(t) * c.q_dim();
    args.n_tokens = n;
    args.start_pos = seq.start_pos;
    args.n_heads = c.n_heads;
    args.n_kv_heads = c.n_kv_heads;
    args.head_dim = c.head_dim();
    args.window = c.LayerWindow(layer);
    args.score_divisor = c.query_scale != 0.0f ? 1.0f : 0.0f;  // 1: q is scaled already
    args.softcap = c.attn_softcap;
    const TensorView& sinks = m.weights.layers[layer].attn_sinks;
    args.sinks = sinks.present() ? sinks.f32() : nullptr;
    args.kv = m.kv.LayerView(layer, seq.block_table);
    t += n;
  }
  ops.Attention(std::span<const kernels::AttentionArgs>(a->attention).first(plan.seqs.size()));
}

// For every seq that wants logits: logits rows = classifier . rmsnorm(x of its last
// logits_tokens tokens), rows in plan order.
void ComputeLogits(const LlamaForwardContext& m, const StepPlan& plan, OpRunner& ops,
                   Activations* a) {
  const int dim = m.config.dim;
  int t = 0;     // first token of the current sequence
  int rows = 0;  // logits rows so far
  for (size_t s = 0; s < plan.seqs.size(); s++) {
    const SeqStep& seq = plan.seqs[s];
    const int n = static_cast<int>(seq.tokens.size());
    a->logits_row[s] = -1;
    if (seq.want_logits) {
      const int k = seq.logits_tokens;
      const float* first = a->x.data() + static_cast<int64_t>(t + n - k) * dim;  // [k, dim]
      std::copy(first, first + static_cast<int64_t>(k) * dim,
                a->last_x.data() + static_cast<int64_t>(rows) * dim);
      a->logits_row[s] = rows;
      rows += k;
    }
    t += n;
  }
  if (rows == 0) return;
  float* last_x = a->last_x.data();  // [rows, dim]
  ops.RmsNorm(last_x, m.weights.final_norm, last_x, rows, dim, m.config.rms_norm_eps);
  MatmulSource in = OpRunner::Source(last_x, rows, dim);
  ops.Matmul(m.weights.classifier, &in, a->logits.data());
  if (m.config.final_softcap > 0) {
    ops.SoftCap(a->logits.data(), rows, m.config.vocab_size, m.config.final_softcap);
  }
}

// For every seq whose slice ends an input to embed (SeqStep::embed, last-token pooling): row s of
// act->pooled = rmsnorm(x of its last token) * final_norm, the state the classifier would read.
void PoolLastTokens(const LlamaForwardContext& m, const StepPlan& plan, OpRunner& ops,
                    Activations* a) {
  const int dim = m.config.dim;
  int t = 0;  // first token of the current sequence
  for (size_t s = 0; s < plan.seqs.size(); s++) {
    const SeqStep& seq = plan.seqs[s];
    t += static_cast<int>(seq.tokens.size());
    if (seq.embed == PoolingType::kNone) continue;
    const float* last = a->x.data() + static_cast<int64_t>(t - 1) * dim;  // [dim]
    float* out = a->pooled.data() + static_cast<int64_t>(s) * dim;        // [dim]
    ops.RmsNorm(last, m.weights.final_norm, out, 1, dim, m.config.rms_norm_eps);
  }
}

// Layer l's q and k ([n, q_dim], [n, kv_dim] in act) made ready to attend: per-head RMSNorm
// (qwen3, gemma3) or whole-row (olmoe), RoPE (not in smollm3's every 4th layer), gemma's query
// scale.
void PositionQk(const LlamaForwardContext& m, int l, int n, OpRunner& ops, Activations* a) {
  const ModelConfig& c = m.config;
  const LayerWeights& w = m.weights.layers[l];
  float* q = a->q.data();
  float* k = a->k.data();
  const float eps = c.rms_norm_eps;
  if (c.qk_norm_whole_row) {  // olmoe: each token's q and k rows normed whole
    if (w.q_norm.present()) ops.RmsNorm(q, w.q_norm, q, n, c.q_dim(), eps);
    if (w.k_norm.present()) ops.RmsNorm(k, w.k_norm, k, n, c.kv_dim(), eps);
  } else {
    if (w.q_norm.present()) ops.RmsNorm(q, w.q_norm, q, n * c.n_heads, c.head_dim(), eps);
    if (w.k_norm.present()) ops.RmsNorm(k, w.k_norm, k, n * c.n_kv_heads, c.head_dim(), eps);
  }
  if (c.LayerRotates(l)) {
    const kernels::RopeFreqs freqs = LayerRopeFreqs(m, l);
    const kernels::RopeLayout rope = Layout(c.rope_style);
    ops.Rope(q, a->positions.data(), n, c.n_heads, c.head_dim(), freqs, rope);
    ops.Rope(k, a->positions.data(), n, c.n_kv_heads, c.head_dim(), freqs, rope);
  }
  if (c.query_scale != 0.0f) ops.Scale(q, n * c.n_heads, c.head_dim(), c.query_scale);
}

}  // namespace

void ForwardLlama(const LlamaForwardContext& m, const StepPlan& plan, OpRunner& ops,
                  Activations* a) {
  const ModelConfig& c = m.config;
  const float eps = c.rms_norm_eps;
  float* x = a->x.data();      // [n, dim]
  float* xb = a->xb.data();    // [n, dim], the attention output [n, q_dim]
  float* xb2 = a->xb2.data();  // [n, dim]
  float* q = a->q.data();      // [n, q_dim]
  float* k = a->k.data();      // [n, kv_dim]
  float* v = a->v.data();      // [n, kv_dim]
  float* hb = a->hb.data();    // [n, hidden_dim]
  float* hb2 = a->hb2.data();  // [n, hidden_dim]
  const int n = GatherTokens(plan, a, a->token_ids.data());
  ops.Embed(m.weights.token_embedding, std::span<const int32_t>(a->token_ids).first(n), x);
  if (c.embedding_scale != 0.0f) ops.Scale(x, n, c.dim, c.embedding_scale);

  for (int l = 0; l < c.n_layers; l++) {
    const LayerWeights& w = m.weights.layers[l];

    // Attention: qkv of the normed input (+ biases), position q and k, cache k and v, attend,
    // project, (norm,) add.
    ops.RmsNorm(x, w.attn_norm, xb, n, c.dim, eps);
    MatmulSource attn_in = OpRunner::Source(xb, n, c.dim);
    ops.Matmuls({{w.wq, q}, {w.wk, k}, {w.wv, v}}, &attn_in);
    if (w.bq.present()) ops.AddBias(q, w.bq, n);
    if (w.bk.present()) ops.AddBias(k, w.bk, n);
    if (w.bv.present()) ops.AddBias(v, w.bv, n);
    PositionQk(m, l, n, ops, a);
    StoreKv(plan, l, *a, ops, m.kv);
    Attend(m, plan, l, ops, a);  // xb = attention output
    MatmulSource attn_out = OpRunner::Source(xb, n, c.q_dim());
    ops.Matmul(w.wo, &attn_out, xb2);
    if (w.bo.present()) ops.AddBias(xb2, w.bo, n);
    if (w.attn_post_norm.present()) ops.RmsNorm(xb2, w.attn_post_norm, xb2, n, c.dim, eps);
    ops.Add(x, xb2, n, c.dim);

    // Feed-forward: x += w2 . (act(w1 . xb) * (w3 . xb)) with xb the normed input, or the same
    // through the k experts the router picks for each token, weighted (moe_ffn.h); the sum normed
    // before it is added when the family says so.
    ops.RmsNorm(x, w.ffn_norm, xb, n, c.dim, eps);
    if (c.moe()) {
      MoeFfn(c, w, xb, n, ops, a, xb2);
    } else {
      MatmulSource ffn_in = OpRunner::Source(xb, n, c.dim);
      ops.Matmuls({{w.w1, hb}, {w.w3, hb2}}, &ffn_in);
      ops.GatedActivation(c.ffn_activation, hb, hb2, n, c.hidden_dim);
      MatmulSource ffn_hidden = OpRunner::Source(hb, n, c.hidden_dim);
      ops.Matmul(w.w2, &ffn_hidden, xb2);
    }
    if (w.ffn_post_norm.present()) ops.RmsNorm(xb2, w.ffn_post_norm, xb2, n, c.dim, eps);
    ops.Add(x, xb2, n, c.dim);
  }

  ComputeLogits(m, plan, ops, a);  // final norm and classifier, last token(s) of each seq that asks
  PoolLastTokens(m, plan, ops, a);  // final norm of the last token of each input to embed
}

}  // namespace smallmind::worker
