#include "worker/model/weights.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <utility>

#include "kernels/dtype.h"

namespace smallmind::worker {
namespace {

constexpr std::align_val_t kHeapAlignment{64};  // one cache line, and a full AVX-512 vector

std::string ErrnoText() { return std::strerror(errno); }

// OK when `t` is present with shape [rows, cols]; otherwise what is wrong with it.
shared::Status CheckShape(const TensorView& t, const std::string& name, int64_t rows,
                          int64_t cols) {
  if (!t.present()) return shared::InvalidArgument("missing tensor " + name);
  if (t.rows != rows || t.cols != cols) {
    return shared::InvalidArgument("tensor " + name + " has shape [" + std::to_string(t.rows) +
                                   ", " + std::to_string(t.cols) + "], expected [" +
                                   std::to_string(rows) + ", " + std::to_string(cols) + "]");
  }
  return shared::Status::Ok();
}

shared::Status CheckOptional(const TensorView& t, const std::string& name, int64_t cols) {
  return t.present() ? CheckShape(t, name, 1, cols) : shared::Status::Ok();
}

// An optional [rows, cols] F32 tensor (a decoder's extra biases, gpt-oss's sinks).
shared::Status CheckOptionalF32(const TensorView& t, const std::string& name, int64_t rows,
                                int64_t cols) {
  if (!t.present()) return shared::Status::Ok();
  SM_RETURN_IF_ERROR(CheckShape(t, name, rows, cols));
  if (t.type != kernels::DType::kF32)
    return shared::InvalidArgument("tensor " + name + " must be F32");
  return shared::Status::Ok();
}

// A required [1, cols] F32 vector (an encoder's biases and LayerNorm weights).
shared::Status CheckF32Vector(const TensorView& t, const std::string& name, int64_t cols) {
  SM_RETURN_IF_ERROR(CheckShape(t, name, 1, cols));
  if (t.type != kernels::DType::kF32)
    return shared::InvalidArgument("tensor " + name + " must be F32");
  return shared::Status::Ok();
}

// A reranker's classification head (ModelConfig::rank_outputs > 0): cls [dim, dim] with its
// bias then cls_out [rank_outputs, dim], or either one alone giving the rank_outputs values.
shared::Status ValidateRankHead(const ModelConfig& c, const Weights& w) {
  if (c.rank_outputs == 0) {
    if (w.cls.present() || w.cls_out.present()) {
      return shared::InvalidArgument("a classification head without pooling rank");
    }
    return shared::Status::Ok();
  }
  const int64_t cls_rows = w.cls_out.present() ? c.dim : c.rank_outputs;
  if (w.cls.present()) SM_RETURN_IF_ERROR(CheckShape(w.cls, "cls", cls_rows, c.dim));
  if (w.cls_b.present()) SM_RETURN_IF_ERROR(CheckF32Vector(w.cls_b, "cls_b", cls_rows));
  if (w.cls_out.present()) {
    SM_RETURN_IF_ERROR(CheckShape(w.cls_out, "cls_out", c.rank_outputs, c.dim));
  }
  if (w.cls_out_b.present()) {
    SM_RETURN_IF_ERROR(CheckF32Vector(w.cls_out_b, "cls_out_b", c.rank_outputs));
  }
  if (!w.cls.present() && !w.cls_out.present()) {
    return shared::InvalidArgument("pooling rank without cls.weight or cls.output.weight");
  }
  return shared::Status::Ok();
}

// An encoder's tensors (ModelConfig::encoder): embeddings, their LayerNorm, and per layer q/k/v/o
// and the FFN's up and down with their biases and the two post-LayerNorms.
shared::Status ValidateEncoderWeights(const ModelConfig& c, const Weights& w) {
  SM_RETURN_IF_ERROR(
      CheckShape(w.position_embedding, "position_embedding", c.context_length, c.dim));
  if (!w.token_types.present() || w.token_types.cols != c.dim || w.token_types.rows < 1 ||
      w.token_types.type != kernels::DType::kF32) {
    return shared::InvalidArgument("tensor token_types must be F32 rows of " +
                                   std::to_string(c.dim));
  }
  SM_RETURN_IF_ERROR(CheckF32Vector(w.embedding_norm, "embedding_norm", c.dim));
  SM_RETURN_IF_ERROR(CheckF32Vector(w.embedding_norm_b, "embedding_norm_b", c.dim));
  for (int l = 0; l < c.n_layers; l++) {
    const LayerWeights& lw = w.layers[l];
    const std::string p = "layer " + std::to_string(l) + " ";
    SM_RETURN_IF_ERROR(CheckShape(lw.wq, p + "wq", c.q_dim(), c.dim));
    SM_RETURN_IF_ERROR(CheckShape(lw.wk, p + "wk", c.kv_dim(), c.dim));
    SM_RETURN_IF_ERROR(CheckShape(lw.wv, p + "wv", c.kv_dim(), c.dim));
    SM_RETURN_IF_ERROR(CheckShape(lw.wo, p + "wo", c.dim, c.q_dim()));
    SM_RETURN_IF_ERROR(CheckShape(lw.w3, p + "ffn_up", c.hidden_dim, c.dim));
    SM_RETURN_IF_ERROR(CheckShape(lw.w2, p + "ffn_down", c.dim, c.hidden_dim));
    SM_RETURN_IF_ERROR(CheckF32Vector(lw.bq, p + "bq", c.q_dim()));
    SM_RETURN_IF_ERROR(CheckF32Vector(lw.bk, p + "bk", c.kv_dim()));
    SM_RETURN_IF_ERROR(CheckF32Vector(lw.bv, p + "bv", c.kv_dim()));
    SM_RETURN_IF_ERROR(CheckF32Vector(lw.bo, p + "bo", c.dim));
    SM_RETURN_IF_ERROR(CheckF32Vector(lw.ffn_up_b, p + "ffn_up_b", c.hidden_dim));
    SM_RETURN_IF_ERROR(CheckF32Vector(lw.ffn_down_b, p + "ffn_down_b", c.dim));
    SM_RETURN_IF_ERROR(CheckF32Vector(lw.attn_out_norm, p + "attn_out_norm", c.dim));
    SM_RETURN_IF_ERROR(CheckF32Vector(lw.attn_out_norm_b, p + "attn_out_norm_b", c.dim));
    SM_RETURN_IF_ERROR(CheckF32Vector(lw.layer_out_norm, p + "layer_out_norm", c.dim));
    SM_RETURN_IF_ERROR(CheckF32Vector(lw.layer_out_norm_b, p + "layer_out_norm_b", c.dim));
  }
  return ValidateRankHead(c, w);
}

shared::Status CheckExperts(const ExpertsView& v, const std::string& name, int n, int64_t rows,
                            int64_t cols) {
  if (v.count() != n) {
    return shared::InvalidArgument("tensor " + name + " holds " + std::to_string(v.count()) +
                                   " experts, expected " + std::to_string(n));
  }
  for (int e = 0; e < n; e++) SM_RETURN_IF_ERROR(CheckShape(v[e], name, rows, cols));
  return shared::Status::Ok();
}

// The FFN of layer `p`: w1, w2, w3 (dense), or the router and the experts (config.moe()).
shared::Status CheckFfn(const ModelConfig& c, const LayerWeights& lw, const std::string& p) {
  if (!c.moe()) {
    SM_RETURN_IF_ERROR(CheckShape(lw.w1, p + "w1", c.hidden_dim, c.dim));
    SM_RETURN_IF_ERROR(CheckShape(lw.w2, p + "w2", c.dim, c.hidden_dim));
    return CheckShape(lw.w3, p + "w3", c.hidden_dim, c.dim);
  }
  if (c.n_experts_used < 1 || c.n_experts_used > c.n_experts) {
    return shared::InvalidArgument("experts used per token (" + std::to_string(c.n_experts_used) +
                                   ") must be in [1, " + std::to_string(c.n_experts) + "]");
  }
  if (c.shared_expert_ffn_dim > 0) {  // qwen2moe: w1 / w3 / w2 are the shared expert
    const int shared = c.shared_expert_ffn_dim;
    SM_RETURN_IF_ERROR(CheckShape(lw.w1, p + "ffn_gate_shexp", shared, c.dim));
    SM_RETURN_IF_ERROR(CheckShape(lw.w3, p + "ffn_up_shexp", shared, c.dim));
    SM_RETURN_IF_ERROR(CheckShape(lw.w2, p + "ffn_down_shexp", c.dim, shared));
    SM_RETURN_IF_ERROR(CheckShape(lw.shexp_gate, p + "ffn_gate_inp_shexp", 1, c.dim));
  } else {
    for (const TensorView* t : {&lw.w1, &lw.w2, &lw.w3, &lw.shexp_gate}) {
      if (t->present()) return shared::InvalidArgument(p + "has a dense FFN beside its experts");
    }
  }
  const int n = c.n_experts, ffn = c.expert_ffn_dim;
  SM_RETURN_IF_ERROR(CheckShape(lw.router, p + "router", n, c.dim));
  SM_RETURN_IF_ERROR(CheckExperts(lw.gate_exps, p + "gate_exps", n, ffn, c.dim));
  SM_RETURN_IF_ERROR(CheckExperts(lw.up_exps, p + "up_exps", n, ffn, c.dim));
  return CheckExperts(lw.down_exps, p + "down_exps", n, c.dim, ffn);
}

}  // namespace

WeightStorage::~WeightStorage() { Release(); }

WeightStorage::WeightStorage(WeightStorage&& other) noexcept
    : kind_(std::exchange(other.kind_, Kind::kNone)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

WeightStorage& WeightStorage::operator=(WeightStorage&& other) noexcept {
  if (this != &other) {
    Release();
    kind_ = std::exchange(other.kind_, Kind::kNone);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void WeightStorage::Release() {
  if (kind_ == Kind::kHeap) ::operator delete(data_, kHeapAlignment);
  if (kind_ == Kind::kMapped) munmap(data_, size_);
  kind_ = Kind::kNone;
  data_ = nullptr;
  size_ = 0;
}

void WeightStorage::DropPages(const void* p, size_t bytes) const {
  if (kind_ != Kind::kMapped) return;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(p);
  const uintptr_t lo = (begin + page - 1) / page * page, hi = (begin + bytes) / page * page;
  SM_CHECK(begin >= reinterpret_cast<uintptr_t>(data_) &&
           begin + bytes <= reinterpret_cast<uintptr_t>(data_) + size_)
      << "range outside the weight storage";
  // Advice only: a failure leaves the pages resident, which is still correct.
  if (lo < hi) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
}

shared::Result<WeightStorage> WeightStorage::MapFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const std::string reason = ErrnoText();
    if (errno == ENOENT) return shared::NotFound(path + ": cannot open model file: " + reason);
    return shared::InvalidArgument(path + ": cannot open model file: " + reason);
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return shared::InvalidArgument(path + ": not a regular file");
  }
  WeightStorage storage;
  if (st.st_size > 0) {
    void* p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const std::string reason = ErrnoText();
      close(fd);
      return shared::InvalidArgument(path + ": cannot map model file: " + reason);
    }
    storage.kind_ = Kind::kMapped;
    storage.data_ = static_cast<std::byte*>(p);
    storage.size_ = static_cast<size_t>(st.st_size);
  }
  close(fd);  // the mapping stays valid after the descriptor is closed
  return storage;
}

WeightStorage WeightStorage::Allocate(size_t bytes) {
  WeightStorage storage;
  if (bytes == 0) return storage;
  storage.kind_ = Kind::kHeap;
  storage.data_ = static_cast<std::byte*>(::operator new(bytes, kHeapAlignment));
  storage.size_ = bytes;
  std::memset(storage.data_, 0, bytes);
  return storage;
}

WeightStorage WeightStorage::Borrow(std::span<const std::byte> bytes) {
  WeightStorage storage;
  if (bytes.empty()) return storage;
  storage.kind_ = Kind::kBorrowed;
  // Never written through: mutable_data() refuses borrowed storage, Release() only forgets it.
  storage.data_ = const_cast<std::byte*>(bytes.data());
  storage.size_ = bytes.size();
  return storage;
}

std::byte* WeightStorage::mutable_data() {
  SM_CHECK(kind_ == Kind::kHeap) << "only heap weight storage is writable";
  return data_;
}

shared::Status ValidateLlamaWeights(const ModelConfig& c, const Weights& w) {
  SM_RETURN_IF_ERROR(CheckShape(w.token_embedding, "token_embedding", c.vocab_size, c.dim));
  if (static_cast<int>(w.layers.size()) != c.n_layers) {
    return shared::InvalidArgument("weights hold " + std::to_string(w.layers.size()) +
                                   " layers, config says " + std::to_string(c.n_layers));
  }
  if (c.encoder) return ValidateEncoderWeights(c, w);
  for (int l = 0; l < c.n_layers; l++) {
    const LayerWeights& lw = w.layers[l];
    const std::string p = "layer " + std::to_string(l) + " ";
    SM_RETURN_IF_ERROR(CheckShape(lw.attn_norm, p + "attn_norm", 1, c.dim));
    SM_RETURN_IF_ERROR(CheckShape(lw.wq, p + "wq", c.q_dim(), c.dim));
    SM_RETURN_IF_ERROR(CheckShape(lw.wk, p + "wk", c.kv_dim(), c.dim));
    SM_RETURN_IF_ERROR(CheckShape(lw.wv, p + "wv", c.kv_dim(), c.dim));
    SM_RETURN_IF_ERROR(CheckShape(lw.wo, p + "wo", c.dim, c.q_dim()));
    SM_RETURN_IF_ERROR(CheckShape(lw.ffn_norm, p + "ffn_norm", 1, c.dim));
    SM_RETURN_IF_ERROR(CheckFfn(c, lw, p));
    SM_RETURN_IF_ERROR(CheckOptional(lw.bq, p + "bq", c.q_dim()));
    SM_RETURN_IF_ERROR(CheckOptional(lw.bk, p + "bk", c.kv_dim()));
    SM_RETURN_IF_ERROR(CheckOptional(lw.bv, p + "bv", c.kv_dim()));
    const bool whole = c.qk_norm_whole_row;
    SM_RETURN_IF_ERROR(CheckOptional(lw.q_norm, p + "q_norm", whole ? c.q_dim() : c.head_dim()));
    SM_RETURN_IF_ERROR(CheckOptional(lw.k_norm, p + "k_norm", whole ? c.kv_dim() : c.head_dim()));
    SM_RETURN_IF_ERROR(CheckOptional(lw.attn_post_norm, p + "attn_post_norm", c.dim));
    SM_RETURN_IF_ERROR(CheckOptional(lw.ffn_post_norm, p + "ffn_post_norm", c.dim));
    SM_RETURN_IF_ERROR(CheckOptionalF32(lw.bo, p + "bo", 1, c.dim));
    SM_RETURN_IF_ERROR(CheckOptionalF32(lw.attn_sinks, p + "attn_sinks", 1, c.n_heads));
    SM_RETURN_IF_ERROR(CheckOptionalF32(lw.router_b, p + "router_b", 1, c.n_experts));
    SM_RETURN_IF_ERROR(
        CheckOptionalF32(lw.gate_exps_b, p + "gate_exps_b", c.n_experts, c.expert_ffn_dim));
    SM_RETURN_IF_ERROR(
        CheckOptionalF32(lw.up_exps_b, p + "up_exps_b", c.n_experts, c.expert_ffn_dim));
    SM_RETURN_IF_ERROR(CheckOptionalF32(lw.down_exps_b, p + "down_exps_b", c.n_experts, c.dim));
  }
  SM_RETURN_IF_ERROR(CheckShape(w.final_norm, "final_norm", 1, c.dim));
  SM_RETURN_IF_ERROR(CheckOptional(w.rope_freqs, "rope_freqs", c.rotary_dims() / 2));
  if (w.rope_freqs.present() && w.rope_freqs.type != kernels::DType::kF32) {
    return shared::InvalidArgument("tensor rope_freqs must be F32");
  }
  return CheckShape(w.classifier, "classifier", c.vocab_size, c.dim);
}

std::vector<const TensorView*> MatricesOf(const Weights& w) {
  std::vector<const TensorView*> m;
  if (w.classifier.present()) m.push_back(&w.classifier);  // an encoder has none
  for (const TensorView* t : {&w.cls, &w.cls_out}) {       // a reranker's head
    if (t->present()) m.push_back(t);
  }
  for (const LayerWeights& l : w.layers) {
    for (const TensorView* t :
         {&l.wq, &l.wk, &l.wv, &l.wo, &l.w1, &l.w2, &l.w3, &l.router, &l.shexp_gate}) {
      if (t->present()) m.push_back(t);
    }
    for (const ExpertsView* v : {&l.gate_exps, &l.up_exps, &l.down_exps}) {
      for (const TensorView& e : v->experts) m.push_back(&e);
    }
  }
  return m;
}

uint64_t MatrixBytesPerToken(const ModelConfig& c, const Weights& w) {
  uint64_t total = 0, experts = 0;
  for (const TensorView* t : MatricesOf(w)) total += t->bytes();
  for (const LayerWeights& l : w.layers) {
    for (const ExpertsView* v : {&l.gate_exps, &l.up_exps, &l.down_exps}) {
      for (const TensorView& e : v->experts) experts += e.bytes();
    }
  }
  if (experts == 0 || c.n_experts <= 0) return total;
  return total - experts + experts / static_cast<uint64_t>(c.n_experts) * c.n_experts_used;
}

}  // namespace smallmind::worker
