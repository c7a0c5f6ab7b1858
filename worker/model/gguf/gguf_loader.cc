#include "worker/model/gguf/gguf_loader.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "worker/model/arch/arch_description.h"
#include "worker/model/gguf/fused_rows.h"
#include "worker/model/gguf/gguf_arch_keys.h"
#include "worker/model/gguf/gguf_arch_options.h"
#include "worker/model/gguf/gguf_vocab.h"
#include "worker/model/gguf/longrope.h"
#include "worker/model/gguf/yarn.h"

namespace smallmind::worker {
namespace {

// Bounds on what a model may declare, so nothing is sized from absurd metadata.
constexpr int64_t kMaxDim = 1 << 16;
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxContext = 1 << 24;
constexpr int64_t kMaxExperts = 1024;  // llama.cpp's LLAMA_MAX_EXPERTS is 512

shared::Result<int> GetDim(const GgufFile& f, const std::string& key, int64_t max) {
  SM_ASSIGN_OR_RETURN(int64_t v, f.GetInt(key));
  if (v < 1 || v > max) {
    return shared::InvalidArgument(f.path() + ": " + key + " = " + std::to_string(v) +
                                   " is outside [1, " + std::to_string(max) + "]");
  }
  return static_cast<int>(v);
}

// Maps tensors of one file, remembering which names it took, so that a tensor the architecture
// does not use is refused instead of ignored.
class TensorMapper {
 public:
  TensorMapper(const GgufFile& f, const WeightStorage& storage) : f_(f), storage_(storage) {}

  shared::Result<TensorView> Get(const std::string& name, bool required) {
    const GgufTensorInfo* t = f_.FindTensor(name);
    if (t == nullptr) {
      if (required) return shared::InvalidArgument(f_.path() + ": missing tensor " + name);
      return TensorView{};
    }
    if (t->n_dims > 2) {
      return shared::InvalidArgument(f_.path() + ": tensor " + name + " has " +
                                     std::to_string(t->n_dims) + " dimensions, expected <= 2");
    }
    used_.insert(t->name);
    TensorView v;
    v.type = t->type;
    v.data = storage_.data() + f_.data_offset() + t->offset;
    v.rows = t->n_rows();
    v.cols = t->row_length();
    return v;
  }

  // The 3-D tensor `name` ([n_experts, rows, cols], dims {cols, rows, n_experts}) as one view per
  // expert into the mapped bytes.
  shared::Result<ExpertsView> GetExperts(const std::string& name, int n_experts) {
    const GgufTensorInfo* t = f_.FindTensor(name);
    if (t == nullptr) return shared::InvalidArgument(f_.path() + ": missing tensor " + name);
    if (t->n_dims != 3 || t->dims[2] != n_experts) {
      return shared::InvalidArgument(
          f_.path() + ": tensor " + name + " has " + std::to_string(t->n_dims) +
          " dimensions (outermost " + std::to_string(t->dims[t->n_dims - 1]) +
          "), expected 3 with the outermost the expert count " + std::to_string(n_experts));
    }
    used_.insert(t->name);
    return ExpertsView::Slice(t->type, storage_.data() + f_.data_offset() + t->offset, n_experts,
                              t->dims[1], t->dims[0]);
  }

  // InvalidArgument naming the first tensor of the file that no Get took.
  shared::Status CheckAllUsed(std::string_view arch) const {
    for (const GgufTensorInfo& t : f_.tensors()) {
      if (used_.count(t.name) != 0) continue;
      return shared::InvalidArgument(f_.path() + ": tensor '" + t.name + "' is not part of " +
                                     std::string(arch) +
                                     " as smallmind implements it: refusing the file rather "
                                     "than ignoring a tensor that may change the computation");
    }
    return shared::Status::Ok();
  }

 private:
  const GgufFile& f_;
  const WeightStorage& storage_;
  std::unordered_set<std::string> used_;
};

// wq, wk, wv: attn_q/k/v.weight, or the row ranges of one attn_qkv.weight (phi3).
shared::Status MapQkv(TensorMapper& t, const ArchDescription& d, const ModelConfig& c,
                      const std::string& p, LayerWeights* lw) {
  TensorView fused;  // taken only for a family that fuses: another's attn_qkv stays unused
  if (d.fused_qkv) {
    SM_ASSIGN_OR_RETURN(fused, t.Get(p + "attn_qkv.weight", false));
  }
  if (!fused.present()) {  // phi3 files may store q, k and v apart too, as llama.cpp reads them
    SM_ASSIGN_OR_RETURN(lw->wq, t.Get(p + "attn_q.weight", true));
    SM_ASSIGN_OR_RETURN(lw->wk, t.Get(p + "attn_k.weight", true));
    SM_ASSIGN_OR_RETURN(lw->wv, t.Get(p + "attn_v.weight", true));
    return shared::Status::Ok();
  }
  const int64_t rows[] = {c.q_dim(), c.kv_dim(), c.kv_dim()};
  SM_ASSIGN_OR_RETURN(std::vector<TensorView> qkv, SplitRows(fused, rows, p + "attn_qkv.weight"));
  lw->wq = qkv[0];
  lw->wk = qkv[1];
  lw->wv = qkv[2];
  return shared::Status::Ok();
}

// w1 (gate), w3 (up): ffn_gate/ffn_up.weight, or the two halves of ffn_up.weight (phi3).
shared::Status MapGateUp(TensorMapper& t, const ArchDescription& d, const ModelConfig& c,
                         const std::string& p, LayerWeights* lw) {
  SM_ASSIGN_OR_RETURN(TensorView up, t.Get(p + "ffn_up.weight", true));
  if (!d.fused_gate_up) {
    lw->w3 = up;
    SM_ASSIGN_OR_RETURN(lw->w1, t.Get(p + "ffn_gate.weight", true));
    return shared::Status::Ok();
  }
  const int64_t rows[] = {c.hidden_dim, c.hidden_dim};
  SM_ASSIGN_OR_RETURN(std::vector<TensorView> gate_up, SplitRows(up, rows, p + "ffn_up.weight"));
  lw->w1 = gate_up[0];
  lw->w3 = gate_up[1];
  return shared::Status::Ok();
}

// The FFN of layer prefix `p`: dense (ffn_gate / ffn_down / ffn_up) or a router and experts.
shared::Status MapFfn(TensorMapper& t, const ArchDescription& d, const ModelConfig& c,
                      const std::string& p, LayerWeights* lw) {
  if (!c.moe()) {
    SM_RETURN_IF_ERROR(MapGateUp(t, d, c, p, lw));
    SM_ASSIGN_OR_RETURN(lw->w2, t.Get(p + "ffn_down.weight", true));
    return shared::Status::Ok();
  }
  SM_ASSIGN_OR_RETURN(lw->router, t.Get(p + "ffn_gate_inp.weight", true));
  SM_ASSIGN_OR_RETURN(lw->gate_exps, t.GetExperts(p + "ffn_gate_exps.weight", c.n_experts));
  SM_ASSIGN_OR_RETURN(lw->up_exps, t.GetExperts(p + "ffn_up_exps.weight", c.n_experts));
  SM_ASSIGN_OR_RETURN(lw->down_exps, t.GetExperts(p + "ffn_down_exps.weight", c.n_experts));
  if (d.shared_expert) {  // qwen2moe: the shared expert is the layer's dense w1 / w3 / w2
    SM_ASSIGN_OR_RETURN(lw->w1, t.Get(p + "ffn_gate_shexp.weight", true));
    SM_ASSIGN_OR_RETURN(lw->w3, t.Get(p + "ffn_up_shexp.weight", true));
    SM_ASSIGN_OR_RETURN(lw->w2, t.Get(p + "ffn_down_shexp.weight", true));
    SM_ASSIGN_OR_RETURN(lw->shexp_gate, t.Get(p + "ffn_gate_inp_shexp.weight", true));
  }
  if (d.expert_biases) {
    SM_ASSIGN_OR_RETURN(lw->router_b, t.Get(p + "ffn_gate_inp.bias", true));
    SM_ASSIGN_OR_RETURN(lw->gate_exps_b, t.Get(p + "ffn_gate_exps.bias", true));
    SM_ASSIGN_OR_RETURN(lw->up_exps_b, t.Get(p + "ffn_up_exps.bias", true));
    SM_ASSIGN_OR_RETURN(lw->down_exps_b, t.Get(p + "ffn_down_exps.bias", true));
  }
  return shared::Status::Ok();
}

shared::Status MapLayer(TensorMapper& t, const ArchDescription& d, const ModelConfig& c, int l,
                        LayerWeights* lw) {
  const std::string p = "blk." + std::to_string(l) + ".";
  SM_ASSIGN_OR_RETURN(lw->attn_norm, t.Get(p + "attn_norm.weight", true));
  SM_RETURN_IF_ERROR(MapQkv(t, d, c, p, lw));
  SM_ASSIGN_OR_RETURN(lw->wo, t.Get(p + "attn_output.weight", true));
  SM_ASSIGN_OR_RETURN(lw->ffn_norm, t.Get(p + std::string(d.ffn_norm_name) + ".weight", true));
  SM_RETURN_IF_ERROR(MapFfn(t, d, c, p, lw));
  if (d.attn_output_bias) {
    SM_ASSIGN_OR_RETURN(lw->bo, t.Get(p + "attn_output.bias", true));
  }
  if (d.attn_sinks) {
    SM_ASSIGN_OR_RETURN(lw->attn_sinks, t.Get(p + "attn_sinks.weight", true));
  }
  if (d.qkv_bias) {
    SM_ASSIGN_OR_RETURN(lw->bq, t.Get(p + "attn_q.bias", false));
    SM_ASSIGN_OR_RETURN(lw->bk, t.Get(p + "attn_k.bias", false));
    SM_ASSIGN_OR_RETURN(lw->bv, t.Get(p + "attn_v.bias", false));
  }
  if (d.qk_norm) {
    SM_ASSIGN_OR_RETURN(lw->q_norm, t.Get(p + "attn_q_norm.weight", true));
    SM_ASSIGN_OR_RETURN(lw->k_norm, t.Get(p + "attn_k_norm.weight", true));
  }
  if (d.post_norms) {
    SM_ASSIGN_OR_RETURN(lw->attn_post_norm, t.Get(p + "post_attention_norm.weight", true));
    SM_ASSIGN_OR_RETURN(lw->ffn_post_norm, t.Get(p + "post_ffw_norm.weight", true));
  }
  return shared::Status::Ok();
}

// An encoder's tensors beside token_embd (llama.cpp's bert names): position and token-type
// embeddings, the embedding LayerNorm, and per layer q/k/v/output with biases, the two
// post-LayerNorms and the ungated FFN's up and down with biases.
shared::Status MapEncoder(TensorMapper& t, const ModelConfig& c, Weights* w) {
  SM_ASSIGN_OR_RETURN(w->position_embedding, t.Get("position_embd.weight", true));
  SM_ASSIGN_OR_RETURN(w->token_types, t.Get("token_types.weight", true));
  SM_ASSIGN_OR_RETURN(w->embedding_norm, t.Get("token_embd_norm.weight", true));
  SM_ASSIGN_OR_RETURN(w->embedding_norm_b, t.Get("token_embd_norm.bias", true));
  // A reranker's classification head (llama.cpp's LLM_TENSOR_CLS / CLS_OUT), read only with
  // pooling rank: an embedding file carrying one keeps refusing it as an unused tensor.
  if (c.pooling == PoolingType::kRank) {
    SM_ASSIGN_OR_RETURN(w->cls, t.Get("cls.weight", false));
    SM_ASSIGN_OR_RETURN(w->cls_b, t.Get("cls.bias", false));
    SM_ASSIGN_OR_RETURN(w->cls_out, t.Get("cls.output.weight", false));
    SM_ASSIGN_OR_RETURN(w->cls_out_b, t.Get("cls.output.bias", false));
  }
  w->layers.resize(c.n_layers);
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    LayerWeights& lw = w->layers[l];
    const std::pair<TensorView*, const char*> named[] = {
        {&lw.wq, "attn_q.weight"},
        {&lw.bq, "attn_q.bias"},
        {&lw.wk, "attn_k.weight"},
        {&lw.bk, "attn_k.bias"},
        {&lw.wv, "attn_v.weight"},
        {&lw.bv, "attn_v.bias"},
        {&lw.wo, "attn_output.weight"},
        {&lw.bo, "attn_output.bias"},
        {&lw.attn_out_norm, "attn_output_norm.weight"},
        {&lw.attn_out_norm_b, "attn_output_norm.bias"},
        {&lw.w3, "ffn_up.weight"},
        {&lw.ffn_up_b, "ffn_up.bias"},
        {&lw.w2, "ffn_down.weight"},
        {&lw.ffn_down_b, "ffn_down.bias"},
        {&lw.layer_out_norm, "layer_output_norm.weight"},
        {&lw.layer_out_norm_b, "layer_output_norm.bias"},
    };
    for (const auto& [view, name] : named) {
      SM_ASSIGN_OR_RETURN(*view, t.Get(p + name, true));
    }
  }
  return shared::Status::Ok();
}

// The head size: attention.key_length when present (attention.value_length must then be the same:
// separate k and v widths are not supported), else embedding / heads. Sets c->head_size only when
// the file names one that differs from embedding / heads, so older files keep their config.
shared::Status ReadHeadSize(const GgufFile& f, const std::string& a, ModelConfig* c) {
  const std::string key_key = a + ".attention.key_length";
  const std::string value_key = a + ".attention.value_length";
  int key = 0, value = 0;
  if (f.Find(key_key) != nullptr) {
    SM_ASSIGN_OR_RETURN(key, GetDim(f, key_key, kMaxDim));
  }
  if (f.Find(value_key) != nullptr) {
    SM_ASSIGN_OR_RETURN(value, GetDim(f, value_key, kMaxDim));
  }
  if (key != 0 && value != 0 && key != value) {
    return shared::InvalidArgument(f.path() + ": metadata key '" + value_key + "' is " +
                                   std::to_string(value) + " but '" + key_key + "' is " +
                                   std::to_string(key) +
                                   ": separate key and value head sizes are not supported");
  }
  if (key == 0) key = value;
  if (key == 0 && c->dim % c->n_heads != 0) {
    return shared::InvalidArgument(f.path() + ": heads (" + std::to_string(c->n_heads) +
                                   ") do not divide the embedding (" + std::to_string(c->dim) +
                                   ") and no " + key_key + " names the head size");
  }
  if (key != 0 && int64_t{key} * c->n_heads != c->dim) c->head_size = key;
  if (c->head_dim() % 2 != 0) {
    return shared::InvalidArgument(f.path() + ": head size " + std::to_string(c->head_dim()) +
                                   " is odd; RoPE rotates pairs");
  }
  return shared::Status::Ok();
}

// rope.dimension_count, when present, must be the head size, or for a family with partial rotary
// an even count up to it (then c->rope_dims).
shared::Status ReadRopeDims(const GgufFile& f, const ArchDescription& d, ModelConfig* c) {
  const std::string a(d.name);
  const std::string key = a + ".rope.dimension_count";
  if (f.Find(key) == nullptr) return shared::Status::Ok();
  SM_ASSIGN_OR_RETURN(int64_t v, f.GetInt(key));
  if (v == c->head_dim()) return shared::Status::Ok();
  if (!d.partial_rotary) {
    return shared::InvalidArgument(f.path() + ": metadata key '" + key + "' is " +
                                   std::to_string(v) + ", but smallmind rotates whole heads (" +
                                   std::to_string(c->head_dim()) + ") for " + a +
                                   ": partial rotary is not supported");
  }
  if (v < 2 || v > c->head_dim() || v % 2 != 0) {
    return shared::InvalidArgument(f.path() + ": metadata key '" + key + "' is " +
                                   std::to_string(v) + ", expected an even count of at most the " +
                                   "head size (" + std::to_string(c->head_dim()) + ")");
  }
  c->rope_dims = static_cast<int>(v);
  return shared::Status::Ok();
}

// rope.scaling.type none / linear / yarn (when the family allows it) and the factor: llama.cpp's
// freq_scale = 1 / factor (rope.scaling.factor, or the older rope.scale_linear), which it applies
// to "none" and "linear" files alike, and yarn's corrections (yarn.h). Another type (longrope) is
// refused naming the key.
shared::Status ReadRopeScaling(const GgufFile& f, const ArchDescription& d, ModelConfig* c) {
  const std::string a(d.name);
  const std::string type_key = a + ".rope.scaling.type";
  bool yarn = false;
  if (f.Find(type_key) != nullptr) {
    SM_ASSIGN_OR_RETURN(std::string type, f.GetString(type_key));
    yarn = type == "yarn" && d.rope_scaling_yarn;
    if (type != "none" && !(type == "linear" && d.rope_scaling_linear) && !yarn) {
      return shared::InvalidArgument(f.path() + ": metadata key '" + type_key + "' is '" + type +
                                     "', a rope scaling smallmind does not implement for " + a +
                                     (d.rope_scaling_linear ? " (implemented: none, linear)"
                                      : d.rope_scaling_yarn ? " (implemented: none, yarn)"
                                                            : ""));
    }
  }
  for (const std::string key : {a + ".rope.scale_linear", a + ".rope.scaling.factor"}) {
    if (f.Find(key) == nullptr) continue;
    SM_ASSIGN_OR_RETURN(float factor, f.GetF32(key));
    if (!(factor >= 0.0f) || !std::isfinite(factor)) {
      return shared::InvalidArgument(f.path() + ": metadata key '" + key + "' is " +
                                     std::to_string(factor) + ", expected a finite factor >= 0");
    }
    c->rope_freq_scale = factor == 0.0f ? 1.0f : 1.0f / factor;  // 0: unset, as llama.cpp reads it
  }
  if (yarn) return ReadYarn(f, a, c);
  return shared::Status::Ok();
}

// The experts' width: expert_feed_forward_length, absent feed_forward_length (a family that
// reads no such key, olmoe, takes it only when it says feed_forward_length); and a shared
// expert's: expert_shared_feed_forward_length, absent feed_forward_length (llama.cpp's
// n_ff_shexp).
shared::Status ReadExpertWidths(const GgufFile& f, const ArchDescription& d, ModelConfig* c) {
  const std::string a(d.name);
  const std::string key = a + ".expert_feed_forward_length";
  c->expert_ffn_dim = c->hidden_dim;
  if (f.Find(key) != nullptr) {
    SM_ASSIGN_OR_RETURN(c->expert_ffn_dim, GetDim(f, key, 4 * kMaxDim));
    if (!d.expert_ffn_key && c->expert_ffn_dim != c->hidden_dim) {
      return shared::InvalidArgument(
          f.path() + ": metadata key '" + key + "' is " + std::to_string(c->expert_ffn_dim) +
          ", but llama.cpp's " + a + " sizes its experts by feed_forward_length (" +
          std::to_string(c->hidden_dim) + "): refusing the file rather than guessing");
    }
  }
  if (!d.shared_expert) return shared::Status::Ok();
  c->shared_expert_ffn_dim = c->hidden_dim;
  const std::string shared_key = a + ".expert_shared_feed_forward_length";
  if (f.Find(shared_key) != nullptr) {
    SM_ASSIGN_OR_RETURN(c->shared_expert_ffn_dim, GetDim(f, shared_key, 4 * kMaxDim));
  }
  return shared::Status::Ok();
}

// The mixture-of-experts keys (docs/moe.md): expert_count (0 or absent: dense, which a kRequired
// family refuses), expert_used_count in [1, expert_count], expert_feed_forward_length (absent:
// feed_forward_length, what llama.cpp's llama reads; the experts' shapes are checked against it)
// and expert_weights_norm, which must say what llama.cpp's graph for the family does.
shared::Status ReadExperts(const GgufFile& f, const ArchDescription& d, ModelConfig* c) {
  using Experts = ArchDescription::Experts;
  const std::string a(d.name);
  const std::string count_key = a + ".expert_count";
  if (d.experts == Experts::kNever) return shared::Status::Ok();  // CheckArchKeys: count 0
  int64_t count = 0;
  if (f.Find(count_key) != nullptr) {
    SM_ASSIGN_OR_RETURN(count, f.GetInt(count_key));
  }
  if (count == 0 && d.experts == Experts::kAllowed) return shared::Status::Ok();
  if (count < 1 || count > kMaxExperts) {
    return shared::InvalidArgument(f.path() + ": " + count_key + " = " + std::to_string(count) +
                                   " is outside [1, " + std::to_string(kMaxExperts) + "] (" + a +
                                   " is a mixture of experts)");
  }
  c->n_experts = static_cast<int>(count);
  if (f.Find(a + ".expert_used_count") == nullptr) {
    return shared::InvalidArgument(f.path() + ": metadata key '" + count_key + "' is " +
                                   std::to_string(count) + " (a mixture of experts) but '" + a +
                                   ".expert_used_count' is missing");
  }
  SM_ASSIGN_OR_RETURN(c->n_experts_used, GetDim(f, a + ".expert_used_count", count));
  SM_RETURN_IF_ERROR(ReadExpertWidths(f, d, c));
  c->expert_weights_norm = d.expert_weights_norm;
  c->expert_gating = d.expert_gating;
  const std::string norm_key = a + ".expert_weights_norm";
  if (f.Find(norm_key) != nullptr) {
    SM_ASSIGN_OR_RETURN(bool norm, f.GetBool(norm_key));
    if (norm != d.expert_weights_norm) {
      return shared::InvalidArgument(
          f.path() + ": metadata key '" + norm_key + "' is " + (norm ? "true" : "false") +
          ", but llama.cpp's " + a + " " + (d.expert_weights_norm ? "always" : "never") +
          " renormalises the router weights: refusing the file rather than computing one of two "
          "different models");
    }
  }
  return shared::Status::Ok();
}

// An encoder's keys: the LayerNorm epsilon, and attention.causal, which must be false when present
// (a causal BERT is not what llama.cpp's bert graph computes either).
shared::Status ReadEncoderKeys(const GgufFile& f, const std::string& a, ModelConfig* c) {
  c->encoder = true;
  SM_ASSIGN_OR_RETURN(c->layer_norm_eps, f.GetF32(a + ".attention.layer_norm_epsilon"));
  if (!(c->layer_norm_eps > 0.0f) || !std::isfinite(c->layer_norm_eps)) {
    return shared::InvalidArgument(f.path() + ": " + a +
                                   ".attention.layer_norm_epsilon must be a finite value > 0");
  }
  const std::string causal_key = a + ".attention.causal";
  if (f.Find(causal_key) != nullptr) {
    SM_ASSIGN_OR_RETURN(bool causal, f.GetBool(causal_key));
    if (causal) {
      return shared::InvalidArgument(f.path() + ": metadata key '" + causal_key +
                                     "' is true: smallmind runs " + a +
                                     " with bidirectional attention only");
    }
  }
  return shared::Status::Ok();
}

// A reranker's head width: the rows of cls.output.weight, else of cls.weight (a file with one
// linear layer); InvalidArgument when pooling rank comes without either, or with more outputs
// than the embedding width (the engine's pooled rows).
shared::Status ReadRankOutputs(const GgufFile& f, ModelConfig* c) {
  const GgufTensorInfo* out = f.FindTensor("cls.output.weight");
  if (out == nullptr) out = f.FindTensor("cls.weight");
  if (out == nullptr) {
    return shared::InvalidArgument(
        f.path() +
        ": pooling_type is rank (4) but the file has no classification head "
        "(cls.weight or cls.output.weight): not a reranker");
  }
  if (out->n_rows() < 1 || out->n_rows() > c->dim) {
    return shared::InvalidArgument(f.path() + ": the classification head has " +
                                   std::to_string(out->n_rows()) + " outputs, expected 1.." +
                                   std::to_string(c->dim));
  }
  c->rank_outputs = static_cast<int>(out->n_rows());
  return shared::Status::Ok();
}

// {arch}.pooling_type (llama.cpp's enum): an encoder pools by mean, [CLS] or last token, or
// scores a query-document pair with its classification head (rank, 4); a decoder only by its
// last token (Qwen3-Embedding: its prefill runs in chunks, so only the last token's final state
// is at hand).
shared::Status ReadPooling(const GgufFile& f, const std::string& a, ModelConfig* c) {
  const std::string key = a + ".pooling_type";
  if (f.Find(key) == nullptr) return shared::Status::Ok();
  SM_ASSIGN_OR_RETURN(int64_t v, f.GetInt(key));
  const auto p = static_cast<PoolingType>(v);
  const bool ok = p == PoolingType::kNone || p == PoolingType::kLast ||
                  (c->encoder &&
                   (p == PoolingType::kMean || p == PoolingType::kCls || p == PoolingType::kRank));
  if (v < 0 || v > 4 || !ok) {
    return shared::InvalidArgument(
        f.path() + ": metadata key '" + key + "' is " + std::to_string(v) + ", a pooling " +
        "smallmind does not implement for " + a +
        (c->encoder ? " (implemented: none 0, mean 1, cls 2, last 3, rank 4)"
                    : " (a decoder pools by its last token: none 0, last 3)"));
  }
  c->pooling = p;
  return p == PoolingType::kRank ? ReadRankOutputs(f, c) : shared::Status::Ok();
}

shared::Result<const ArchDescription*> ArchOf(const std::string& path, const std::string& name) {
  const ArchDescription* d = FindArch(name);
  if (d == nullptr) {
    return shared::InvalidArgument(
        path + ": architecture '" + name +
        "' is not supported (supported: " + std::string(SupportedArchNames()) + ")");
  }
  return d;
}

}  // namespace

shared::Result<Weights> MapGgufWeights(const GgufFile& f, const ModelConfig& c,
                                       WeightStorage storage) {
  SM_ASSIGN_OR_RETURN(const ArchDescription* d, ArchOf(f.path(), c.architecture));
  TensorMapper t(f, storage);
  Weights w;
  SM_ASSIGN_OR_RETURN(w.token_embedding, t.Get("token_embd.weight", true));
  if (d->encoder) {
    SM_RETURN_IF_ERROR(MapEncoder(t, c, &w));
    SM_RETURN_IF_ERROR(t.CheckAllUsed(d->name));
    w.storage = std::move(storage);
    return w;
  }
  SM_ASSIGN_OR_RETURN(w.final_norm, t.Get("output_norm.weight", true));
  SM_ASSIGN_OR_RETURN(w.classifier, t.Get("output.weight", false));
  if (!w.classifier.present()) w.classifier = w.token_embedding;  // tied embeddings
  if (d->rope_freqs) {
    SM_ASSIGN_OR_RETURN(w.rope_freqs, t.Get("rope_freqs.weight", false));
  }
  if (d->longrope) {  // the pair the served context picks; the other is read, not used
    SM_ASSIGN_OR_RETURN(const TensorView long_factors, t.Get(kRopeFactorsLong, false));
    SM_ASSIGN_OR_RETURN(const TensorView short_factors, t.Get(kRopeFactorsShort, false));
    SM_ASSIGN_OR_RETURN(const bool long_context, UsesLongRopeFactors(f, c));
    w.rope_freqs = long_context ? long_factors : short_factors;
  }
  if (c.rope_yarn) {
    w.yarn_factors = YarnFactors(c, c.rope_theta);
    if (c.rope_theta_swa > 0.0f && c.rope_theta_swa != c.rope_theta) {
      w.yarn_factors_swa = YarnFactors(c, c.rope_theta_swa);
    }
  }
  w.layers.resize(c.n_layers);
  for (int l = 0; l < c.n_layers; ++l) SM_RETURN_IF_ERROR(MapLayer(t, *d, c, l, &w.layers[l]));
  SM_RETURN_IF_ERROR(t.CheckAllUsed(d->name));
  w.storage = std::move(storage);
  return w;
}

shared::Result<ModelConfig> GgufModelConfig(const GgufFile& f) {
  ModelConfig c;
  SM_ASSIGN_OR_RETURN(c.architecture, f.GetString("general.architecture"));
  const std::string& a = c.architecture;
  SM_ASSIGN_OR_RETURN(const ArchDescription* d, ArchOf(f.path(), a));
  SM_RETURN_IF_ERROR(
      CheckArchKeys(f, a, d->experts != ArchDescription::Experts::kNever, ArchOptionKeys(*d)));
  SM_ASSIGN_OR_RETURN(c.dim, GetDim(f, a + ".embedding_length", kMaxDim));
  SM_ASSIGN_OR_RETURN(c.hidden_dim, GetDim(f, a + ".feed_forward_length", 4 * kMaxDim));
  SM_ASSIGN_OR_RETURN(c.n_layers, GetDim(f, a + ".block_count", kMaxLayers));
  SM_ASSIGN_OR_RETURN(c.n_heads, GetDim(f, a + ".attention.head_count", kMaxDim));
  c.n_kv_heads = c.n_heads;
  if (f.Find(a + ".attention.head_count_kv") != nullptr) {
    SM_ASSIGN_OR_RETURN(c.n_kv_heads, GetDim(f, a + ".attention.head_count_kv", kMaxDim));
  }
  SM_ASSIGN_OR_RETURN(c.context_length, GetDim(f, a + ".context_length", kMaxContext));
  if (d->encoder) {
    SM_RETURN_IF_ERROR(ReadEncoderKeys(f, a, &c));
  } else {
    SM_ASSIGN_OR_RETURN(c.rms_norm_eps, f.GetF32(a + ".attention.layer_norm_rms_epsilon"));
  }
  SM_RETURN_IF_ERROR(ReadPooling(f, a, &c));
  if (f.Find(a + ".rope.freq_base") != nullptr) {
    SM_ASSIGN_OR_RETURN(c.rope_theta, f.GetF32(a + ".rope.freq_base"));
  }
  if (c.n_heads % c.n_kv_heads != 0) {
    return shared::InvalidArgument(f.path() + ": kv heads (" + std::to_string(c.n_kv_heads) +
                                   ") do not divide the heads (" + std::to_string(c.n_heads) + ")");
  }
  SM_RETURN_IF_ERROR(ReadHeadSize(f, a, &c));
  SM_RETURN_IF_ERROR(ReadRopeDims(f, *d, &c));
  SM_RETURN_IF_ERROR(ReadRopeScaling(f, *d, &c));
  SM_RETURN_IF_ERROR(ReadExperts(f, *d, &c));
  if (d->longrope) SM_RETURN_IF_ERROR(ReadRopeAttnFactor(f, a, &c));
  c.rope_style = d->rope_style;
  c.qk_norm_whole_row = d->qk_norm_whole_row;
  c.no_rope_period = d->no_rope_period;
  SM_RETURN_IF_ERROR(ReadArchOptions(f, *d, &c));
  const GgufTensorInfo* embd = f.FindTensor("token_embd.weight");
  if (embd == nullptr)
    return shared::InvalidArgument(f.path() + ": missing tensor token_embd.weight");
  c.vocab_size = static_cast<int>(std::min<int64_t>(embd->n_rows(), 1 << 30));
  return c;
}

shared::Result<GgufModel> LoadGgufModel(const std::string& path) {
  SM_ASSIGN_OR_RETURN(std::unique_ptr<GgufFile> file, GgufFile::Open(path));
  GgufModel m;
  SM_ASSIGN_OR_RETURN(m.llama.config, GgufModelConfig(*file));
  SM_ASSIGN_OR_RETURN(m.tokenizer, GgufTokenizer(*file));
  if (m.tokenizer->vocab_size() != m.llama.config.vocab_size) {
    return shared::InvalidArgument(
        path + ": the tokenizer has " + std::to_string(m.tokenizer->vocab_size()) +
        " tokens but token_embd.weight has " + std::to_string(m.llama.config.vocab_size) + " rows");
  }
  // A second read-only mapping of the same file holds the tensor bytes for the model's lifetime
  // (the page cache backs both, so it costs address space only).
  SM_ASSIGN_OR_RETURN(WeightStorage storage, WeightStorage::MapFile(path));
  if (storage.size() != file->file_size()) {
    return shared::FailedPrecondition(path + ": the file changed while it was being loaded");
  }
  SM_ASSIGN_OR_RETURN(m.llama.weights, MapGgufWeights(*file, m.llama.config, std::move(storage)));
  shared::Status valid = ValidateLlamaWeights(m.llama.config, m.llama.weights);
  if (!valid.ok()) return shared::InvalidArgument(path + ": " + valid.message());
  m.file_size = file->file_size();
  if (file->Find("tokenizer.chat_template") != nullptr) {
    SM_ASSIGN_OR_RETURN(m.chat_template, file->GetString("tokenizer.chat_template"));
  }
  return m;
}

}  // namespace smallmind::worker
