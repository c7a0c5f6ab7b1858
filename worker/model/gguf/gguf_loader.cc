#include "worker/model/gguf/gguf_loader.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "worker/model/arch/arch_description.h"
#include "worker/model/gguf/gguf_arch_keys.h"
#include "worker/model/gguf/gguf_vocab.h"

namespace smallmind::worker {
namespace {

// Bounds on what a model may declare, so nothing is sized from absurd metadata.
constexpr int64_t kMaxDim = 1 << 16;
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxContext = 1 << 24;

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

shared::Status MapLayer(TensorMapper& t, const ArchDescription& d, int l, LayerWeights* lw) {
  const std::string p = "blk." + std::to_string(l) + ".";
  SM_ASSIGN_OR_RETURN(lw->attn_norm, t.Get(p + "attn_norm.weight", true));
  SM_ASSIGN_OR_RETURN(lw->wq, t.Get(p + "attn_q.weight", true));
  SM_ASSIGN_OR_RETURN(lw->wk, t.Get(p + "attn_k.weight", true));
  SM_ASSIGN_OR_RETURN(lw->wv, t.Get(p + "attn_v.weight", true));
  SM_ASSIGN_OR_RETURN(lw->wo, t.Get(p + "attn_output.weight", true));
  SM_ASSIGN_OR_RETURN(lw->ffn_norm, t.Get(p + "ffn_norm.weight", true));
  SM_ASSIGN_OR_RETURN(lw->w1, t.Get(p + "ffn_gate.weight", true));
  SM_ASSIGN_OR_RETURN(lw->w2, t.Get(p + "ffn_down.weight", true));
  SM_ASSIGN_OR_RETURN(lw->w3, t.Get(p + "ffn_up.weight", true));
  if (d.qkv_bias) {
    SM_ASSIGN_OR_RETURN(lw->bq, t.Get(p + "attn_q.bias", false));
    SM_ASSIGN_OR_RETURN(lw->bk, t.Get(p + "attn_k.bias", false));
    SM_ASSIGN_OR_RETURN(lw->bv, t.Get(p + "attn_v.bias", false));
  }
  return shared::Status::Ok();
}

// attention.key_length, attention.value_length and rope.dimension_count, when present, must be
// the head size the loader computes (partial rotary and other head sizes are refused).
shared::Status CheckHeadKeys(const GgufFile& f, const std::string& a, const ModelConfig& c) {
  for (const char* k :
       {".attention.key_length", ".attention.value_length", ".rope.dimension_count"}) {
    const std::string key = a + k;
    if (f.Find(key) == nullptr) continue;
    SM_ASSIGN_OR_RETURN(int64_t v, f.GetInt(key));
    if (v != c.head_dim()) {
      return shared::InvalidArgument(f.path() + ": metadata key '" + key + "' is " +
                                     std::to_string(v) + ", but smallmind implements only " +
                                     std::to_string(c.head_dim()) + " (embedding / heads) for " +
                                     a);
    }
  }
  return shared::Status::Ok();
}

// rope.scaling.type none / linear (when the family allows it) and the factor: llama.cpp's
// freq_scale = 1 / factor (rope.scaling.factor, or the older rope.scale_linear), which it applies
// to "none" and "linear" files alike. yarn and longrope are refused naming the key.
shared::Status ReadRopeScaling(const GgufFile& f, const ArchDescription& d, ModelConfig* c) {
  const std::string a(d.name);
  const std::string type_key = a + ".rope.scaling.type";
  if (f.Find(type_key) != nullptr) {
    SM_ASSIGN_OR_RETURN(std::string type, f.GetString(type_key));
    if (type != "none" && !(type == "linear" && d.rope_scaling_linear)) {
      return shared::InvalidArgument(f.path() + ": metadata key '" + type_key + "' is '" + type +
                                     "', a rope scaling smallmind does not implement for " + a +
                                     (d.rope_scaling_linear ? " (implemented: none, linear)" : ""));
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
  return shared::Status::Ok();
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
  SM_ASSIGN_OR_RETURN(w.final_norm, t.Get("output_norm.weight", true));
  SM_ASSIGN_OR_RETURN(w.classifier, t.Get("output.weight", false));
  if (!w.classifier.present()) w.classifier = w.token_embedding;  // tied embeddings
  if (d->rope_freqs) {
    SM_ASSIGN_OR_RETURN(w.rope_freqs, t.Get("rope_freqs.weight", false));
  }
  w.layers.resize(c.n_layers);
  for (int l = 0; l < c.n_layers; ++l) SM_RETURN_IF_ERROR(MapLayer(t, *d, l, &w.layers[l]));
  SM_RETURN_IF_ERROR(t.CheckAllUsed(d->name));
  w.storage = std::move(storage);
  return w;
}

shared::Result<ModelConfig> GgufModelConfig(const GgufFile& f) {
  ModelConfig c;
  SM_ASSIGN_OR_RETURN(c.architecture, f.GetString("general.architecture"));
  const std::string& a = c.architecture;
  SM_ASSIGN_OR_RETURN(const ArchDescription* d, ArchOf(f.path(), a));
  SM_RETURN_IF_ERROR(CheckArchKeys(f, a));
  SM_ASSIGN_OR_RETURN(c.dim, GetDim(f, a + ".embedding_length", kMaxDim));
  SM_ASSIGN_OR_RETURN(c.hidden_dim, GetDim(f, a + ".feed_forward_length", 4 * kMaxDim));
  SM_ASSIGN_OR_RETURN(c.n_layers, GetDim(f, a + ".block_count", kMaxLayers));
  SM_ASSIGN_OR_RETURN(c.n_heads, GetDim(f, a + ".attention.head_count", kMaxDim));
  c.n_kv_heads = c.n_heads;
  if (f.Find(a + ".attention.head_count_kv") != nullptr) {
    SM_ASSIGN_OR_RETURN(c.n_kv_heads, GetDim(f, a + ".attention.head_count_kv", kMaxDim));
  }
  SM_ASSIGN_OR_RETURN(c.context_length, GetDim(f, a + ".context_length", kMaxContext));
  SM_ASSIGN_OR_RETURN(c.rms_norm_eps, f.GetF32(a + ".attention.layer_norm_rms_epsilon"));
  if (f.Find(a + ".rope.freq_base") != nullptr) {
    SM_ASSIGN_OR_RETURN(c.rope_theta, f.GetF32(a + ".rope.freq_base"));
  }
  if (c.dim % c.n_heads != 0 || c.n_heads % c.n_kv_heads != 0 || c.head_dim() % 2 != 0) {
    return shared::InvalidArgument(f.path() + ": head counts do not divide the embedding (dim " +
                                   std::to_string(c.dim) + ", heads " + std::to_string(c.n_heads) +
                                   ", kv heads " + std::to_string(c.n_kv_heads) + ")");
  }
  SM_RETURN_IF_ERROR(CheckHeadKeys(f, a, c));
  SM_RETURN_IF_ERROR(ReadRopeScaling(f, *d, &c));
  c.rope_style = d->rope_style;
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
