#include "worker/model/llama2c/llama2c_reader.h"

#include <bit>
#include <cstring>
#include <utility>

namespace smallmind::worker {
namespace {

static_assert(std::endian::native == std::endian::little, "llama2.c files are little-endian");

constexpr size_t kHeaderBytes = 7 * sizeof(int32_t);

// Bounds on header fields, far above any published model, so that no size computed from a corrupt
// header can overflow int64 or ask for an absurd amount of memory.
constexpr int32_t kMaxDim = 65536;
constexpr int32_t kMaxHiddenDim = 1 << 20;
constexpr int32_t kMaxLayers = 1024;
constexpr int32_t kMaxVocab = 1 << 22;
constexpr int32_t kMaxSeqLen = 1 << 22;

struct Llama2cHeader {
  int32_t dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
};

std::string HeaderText(const Llama2cHeader& h) {
  return "dim=" + std::to_string(h.dim) + " hidden_dim=" + std::to_string(h.hidden_dim) +
         " n_layers=" + std::to_string(h.n_layers) + " n_heads=" + std::to_string(h.n_heads) +
         " n_kv_heads=" + std::to_string(h.n_kv_heads) +
         " vocab_size=" + std::to_string(h.vocab_size) + " seq_len=" + std::to_string(h.seq_len);
}

shared::Status Bad(const std::string& path, const std::string& what) {
  return shared::InvalidArgument(path + ": not a valid llama2.c checkpoint: " + what);
}

// "" when v is in [1, max]; otherwise what is wrong with header field `name`.
std::string RangeProblem(const char* name, int64_t v, int64_t max) {
  if (v >= 1 && v <= max) return "";
  return std::string("header field ") + name + " = " + std::to_string(v) + " is outside [1, " +
         std::to_string(max) + "]";
}

// "" when the header is plausible; otherwise the first problem found.
std::string HeaderProblem(const Llama2cHeader& h) {
  // int64 so that the absolute value of INT32_MIN is representable (and rejected).
  const int64_t abs_vocab = h.vocab_size < 0 ? -int64_t{h.vocab_size} : int64_t{h.vocab_size};
  for (const std::string& p :
       {RangeProblem("dim", h.dim, kMaxDim),
        RangeProblem("hidden_dim", h.hidden_dim, kMaxHiddenDim),
        RangeProblem("n_layers", h.n_layers, kMaxLayers), RangeProblem("n_heads", h.n_heads, h.dim),
        RangeProblem("n_kv_heads", h.n_kv_heads, h.n_heads),
        RangeProblem("|vocab_size|", abs_vocab, kMaxVocab),
        RangeProblem("seq_len", h.seq_len, kMaxSeqLen)}) {
    if (!p.empty()) return p;
  }
  if (h.dim % h.n_heads != 0) {
    return "n_heads = " + std::to_string(h.n_heads) +
           " does not divide dim = " + std::to_string(h.dim);
  }
  if (h.n_heads % h.n_kv_heads != 0) {
    return "n_kv_heads = " + std::to_string(h.n_kv_heads) +
           " does not divide n_heads = " + std::to_string(h.n_heads);
  }
  if ((h.dim / h.n_heads) % 2 != 0) {
    return "head size dim / n_heads = " + std::to_string(h.dim / h.n_heads) +
           " is odd; RoPE rotates pairs";
  }
  return "";
}

ModelConfig ConfigFromHeader(const Llama2cHeader& h) {
  ModelConfig c;
  c.architecture = "llama";
  c.dim = h.dim;
  c.hidden_dim = h.hidden_dim;
  c.n_layers = h.n_layers;
  c.n_heads = h.n_heads;
  c.n_kv_heads = h.n_kv_heads;
  c.vocab_size = h.vocab_size < 0 ? -h.vocab_size : h.vocab_size;
  c.context_length = h.seq_len;
  c.rms_norm_eps = 1e-5f;
  c.rope_theta = 10000.0f;
  c.rope_style = RopeStyle::kInterleaved;
  return c;
}

// The file holds the header, the core arrays, then (optionally when the classifier is shared) the
// legacy RoPE tables, then the separate classifier if any. Anything else is corrupt.
shared::Status CheckFileSize(const std::string& path, const Llama2cHeader& h, const ModelConfig& c,
                             ClassifierLayout layout, size_t file_bytes) {
  const int64_t core = kHeaderBytes + 4 * Llama2cCoreFloats(c);
  const int64_t rope = 4 * int64_t{c.context_length} * c.head_dim();  // cos + sin tables
  const int64_t classifier = 4 * int64_t{c.vocab_size} * c.dim;
  const int64_t size = static_cast<int64_t>(file_bytes);
  const int64_t need = layout == ClassifierLayout::kShared ? core : core + rope + classifier;
  if (size < need) {
    return Bad(path, "truncated: the header (" + HeaderText(h) + ") implies at least " +
                         std::to_string(need) + " bytes, the file has " + std::to_string(size));
  }
  if (size == need || (layout == ClassifierLayout::kShared && size == core + rope)) {
    return shared::Status::Ok();
  }
  std::string expected = std::to_string(need);
  if (layout == ClassifierLayout::kShared) expected += " or " + std::to_string(core + rope);
  return Bad(path, "the file has " + std::to_string(size) + " bytes but the header (" +
                       HeaderText(h) + ") implies " + expected);
}

// Hands out consecutive F32 arrays of a llama2.c checkpoint.
class F32Cursor {
 public:
  explicit F32Cursor(const float* p) : p_(p) {}
  // The next array of `count` blocks of [rows, cols]; returns its start.
  const float* Take(int64_t count, int64_t rows, int64_t cols) {
    const float* start = p_;
    p_ += count * rows * cols;
    return start;
  }
  void Skip(int64_t floats) { p_ += floats; }

 private:
  const float* p_;
};

TensorView F32View(const float* base, int64_t index, int64_t rows, int64_t cols) {
  return TensorView{kernels::DType::kF32, base + index * rows * cols, rows, cols};
}

}  // namespace

int64_t Llama2cCoreFloats(const ModelConfig& c) {
  const int64_t dim = c.dim, hidden = c.hidden_dim, kv_dim = c.kv_dim();
  const int64_t per_layer = 2 * dim              // attention and FFN norms
                            + 2 * dim * dim      // wq, wo
                            + 2 * kv_dim * dim   // wk, wv
                            + 3 * hidden * dim;  // w1, w2, w3
  return int64_t{c.vocab_size} * dim + c.n_layers * per_layer + dim;
}

Weights MapLlama2cWeights(const ModelConfig& c, WeightStorage storage, size_t offset,
                          ClassifierLayout classifier) {
  Weights w;
  F32Cursor cur(reinterpret_cast<const float*>(storage.data() + offset));
  const int64_t n = c.n_layers, dim = c.dim, hidden = c.hidden_dim, kv_dim = c.kv_dim();
  const float* embedding = cur.Take(1, c.vocab_size, dim);
  const float* attn_norm = cur.Take(n, 1, dim);
  const float* wq = cur.Take(n, dim, dim);
  const float* wk = cur.Take(n, kv_dim, dim);
  const float* wv = cur.Take(n, kv_dim, dim);
  const float* wo = cur.Take(n, dim, dim);
  const float* ffn_norm = cur.Take(n, 1, dim);
  const float* w1 = cur.Take(n, hidden, dim);
  const float* w2 = cur.Take(n, dim, hidden);
  const float* w3 = cur.Take(n, hidden, dim);
  const float* final_norm = cur.Take(1, 1, dim);
  w.token_embedding = F32View(embedding, 0, c.vocab_size, dim);
  w.final_norm = F32View(final_norm, 0, 1, dim);
  w.layers.resize(c.n_layers);
  for (int l = 0; l < c.n_layers; l++) {
    LayerWeights& lw = w.layers[l];
    lw.attn_norm = F32View(attn_norm, l, 1, dim);
    lw.wq = F32View(wq, l, dim, dim);
    lw.wk = F32View(wk, l, kv_dim, dim);
    lw.wv = F32View(wv, l, kv_dim, dim);
    lw.wo = F32View(wo, l, dim, dim);
    lw.ffn_norm = F32View(ffn_norm, l, 1, dim);
    lw.w1 = F32View(w1, l, hidden, dim);
    lw.w2 = F32View(w2, l, dim, hidden);
    lw.w3 = F32View(w3, l, hidden, dim);
  }
  if (classifier == ClassifierLayout::kShared) {
    w.classifier = w.token_embedding;
  } else {
    cur.Skip(int64_t{c.context_length} * c.head_dim());  // legacy RoPE cos + sin tables
    w.classifier = F32View(cur.Take(1, c.vocab_size, dim), 0, c.vocab_size, dim);
  }
  w.storage = std::move(storage);  // moving keeps the bytes in place, so the views stay valid
  return w;
}

namespace {

// The checkpoint in `file` (a mapping or borrowed bytes); `name` prefixes every error.
shared::Result<LlamaModel> LoadFromStorage(WeightStorage file, const std::string& name) {
  const std::span<const std::byte> bytes(file.data(), file.size());
  if (bytes.size() >= 4 && std::memcmp(bytes.data(), "GGUF", 4) == 0) {
    return Bad(name, "it is a GGUF file; load it with the GGUF reader");
  }
  const std::string problem = Llama2cHeaderProblem(bytes);
  if (!problem.empty()) return Bad(name, problem);
  Llama2cHeader header;
  std::memcpy(&header, bytes.data(), kHeaderBytes);
  ModelConfig config = ConfigFromHeader(header);
  const ClassifierLayout layout =
      header.vocab_size < 0 ? ClassifierLayout::kSeparate : ClassifierLayout::kShared;
  SM_RETURN_IF_ERROR(CheckFileSize(name, header, config, layout, file.size()));
  Weights weights = MapLlama2cWeights(config, std::move(file), kHeaderBytes, layout);
  SM_RETURN_IF_ERROR(ValidateLlamaWeights(config, weights));
  return LlamaModel{std::move(config), std::move(weights)};
}

}  // namespace

std::string Llama2cHeaderProblem(std::span<const std::byte> head) {
  if (head.size() < kHeaderBytes) {
    return "the file is " + std::to_string(head.size()) + " bytes, too short for the " +
           std::to_string(kHeaderBytes) + "-byte header";
  }
  Llama2cHeader h;
  static_assert(sizeof(h) == kHeaderBytes);
  std::memcpy(&h, head.data(), kHeaderBytes);
  return HeaderProblem(h);
}

shared::Result<LlamaModel> LoadLlama2cCheckpoint(const std::string& path) {
  SM_ASSIGN_OR_RETURN(WeightStorage file, WeightStorage::MapFile(path));
  return LoadFromStorage(std::move(file), path);
}

shared::Result<LlamaModel> LoadLlama2cCheckpointFromMemory(std::span<const std::byte> bytes,
                                                           const std::string& name) {
  return LoadFromStorage(WeightStorage::Borrow(bytes), name);
}

}  // namespace smallmind::worker
