#include "worker/model/gguf/gguf_loader.h"

#include <algorithm>

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

shared::Result<TensorView> Tensor(const GgufFile& f, const WeightStorage& storage,
                                  const std::string& name, bool required) {
  const GgufTensorInfo* t = f.FindTensor(name);
  if (t == nullptr) {
    if (required) return shared::InvalidArgument(f.path() + ": missing tensor " + name);
    return TensorView{};
  }
  if (t->n_dims > 2) {
    return shared::InvalidArgument(f.path() + ": tensor " + name + " has " +
                                   std::to_string(t->n_dims) + " dimensions, expected <= 2");
  }
  TensorView v;
  v.type = t->type;
  v.data = storage.data() + f.data_offset() + t->offset;
  v.rows = t->n_rows();
  v.cols = t->row_length();
  return v;
}

}  // namespace

shared::Result<Weights> MapGgufWeights(const GgufFile& f, const ModelConfig& c,
                                       WeightStorage storage) {
  Weights w;
  SM_ASSIGN_OR_RETURN(w.token_embedding, Tensor(f, storage, "token_embd.weight", true));
  SM_ASSIGN_OR_RETURN(w.final_norm, Tensor(f, storage, "output_norm.weight", true));
  SM_ASSIGN_OR_RETURN(w.classifier, Tensor(f, storage, "output.weight", false));
  if (!w.classifier.present()) w.classifier = w.token_embedding;  // tied embeddings
  w.layers.resize(c.n_layers);
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    LayerWeights& lw = w.layers[l];
    SM_ASSIGN_OR_RETURN(lw.attn_norm, Tensor(f, storage, p + "attn_norm.weight", true));
    SM_ASSIGN_OR_RETURN(lw.wq, Tensor(f, storage, p + "attn_q.weight", true));
    SM_ASSIGN_OR_RETURN(lw.wk, Tensor(f, storage, p + "attn_k.weight", true));
    SM_ASSIGN_OR_RETURN(lw.wv, Tensor(f, storage, p + "attn_v.weight", true));
    SM_ASSIGN_OR_RETURN(lw.wo, Tensor(f, storage, p + "attn_output.weight", true));
    SM_ASSIGN_OR_RETURN(lw.ffn_norm, Tensor(f, storage, p + "ffn_norm.weight", true));
    SM_ASSIGN_OR_RETURN(lw.w1, Tensor(f, storage, p + "ffn_gate.weight", true));
    SM_ASSIGN_OR_RETURN(lw.w2, Tensor(f, storage, p + "ffn_down.weight", true));
    SM_ASSIGN_OR_RETURN(lw.w3, Tensor(f, storage, p + "ffn_up.weight", true));
    SM_ASSIGN_OR_RETURN(lw.bq, Tensor(f, storage, p + "attn_q.bias", false));
    SM_ASSIGN_OR_RETURN(lw.bk, Tensor(f, storage, p + "attn_k.bias", false));
    SM_ASSIGN_OR_RETURN(lw.bv, Tensor(f, storage, p + "attn_v.bias", false));
  }
  w.storage = std::move(storage);
  return w;
}

shared::Result<ModelConfig> GgufModelConfig(const GgufFile& f) {
  ModelConfig c;
  SM_ASSIGN_OR_RETURN(c.architecture, f.GetString("general.architecture"));
  const std::string& a = c.architecture;
  if (a != "llama" && a != "qwen2") {
    return shared::InvalidArgument(f.path() + ": architecture '" + a +
                                   "' is not supported (supported: llama, qwen2)");
  }
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
  if (f.Find(a + ".attention.key_length") != nullptr) {
    SM_ASSIGN_OR_RETURN(int64_t key_length, f.GetInt(a + ".attention.key_length"));
    if (key_length != c.head_dim()) {
      return shared::InvalidArgument(f.path() + ": head size " + std::to_string(key_length) +
                                     " != embedding / heads is not supported");
    }
  }
  if (f.Find(a + ".rope.scaling.type") != nullptr) {
    SM_ASSIGN_OR_RETURN(std::string scaling, f.GetString(a + ".rope.scaling.type"));
    if (scaling != "none") {
      return shared::InvalidArgument(f.path() + ": rope scaling '" + scaling +
                                     "' is not supported yet");
    }
  }
  // llama GGUFs store Q/K rows for interleaved pairs (the converter permutes them); qwen2 keeps
  // the Hugging Face NeoX layout.
  c.rope_style = a == "qwen2" ? RopeStyle::kNeox : RopeStyle::kInterleaved;
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
