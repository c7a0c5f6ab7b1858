// Model weights: typed tensor views into one owned block of bytes (an mmap of the model file or a
// heap buffer), grouped per layer as the llama forward pass reads them. Built once by a loader,
// then read-only and shared by all engine threads; move-only because the views point into the
// storage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/dtype.h"
#include "shared/check.h"
#include "shared/status.h"
#include "worker/model/experts_view.h"
#include "worker/model/tensor_view.h"
#include "worker/types/model_config.h"

namespace smallmind::worker {

// Owns the bytes the tensor views point into: a read-only private mapping of a file, a 64-byte
// aligned heap buffer, or borrowed bytes that outlive it (a model embedded in the binary).
// Move-only; the bytes never move, so views stay valid when it is moved.
class WeightStorage {
 public:
  WeightStorage() = default;
  ~WeightStorage();
  WeightStorage(WeightStorage&& other) noexcept;
  WeightStorage& operator=(WeightStorage&& other) noexcept;
  WeightStorage(const WeightStorage&) = delete;
  WeightStorage& operator=(const WeightStorage&) = delete;

  // Maps the whole file read-only. Errors name the file and the OS reason.
  static shared::Result<WeightStorage> MapFile(const std::string& path);
  // A zero-filled heap buffer of `bytes` bytes, aligned to 64.
  static WeightStorage Allocate(size_t bytes);
  // Views `bytes` without copying or owning them; they must stay valid and unchanged for as long as
  // the storage and every view into it (static data, e.g. a model embedded in the binary).
  static WeightStorage Borrow(std::span<const std::byte> bytes);

  const std::byte* data() const { return data_; }
  std::byte* mutable_data();  // heap storage only

  // Hints that [p, p + bytes) will not be read for a while: a mapped file drops the whole pages of
  // that range from this process (they fault back in from the file, unchanged, if read again); heap
  // and borrowed storage keep them. Used once a copy of a matrix has been repacked elsewhere.
  void DropPages(const void* p, size_t bytes) const;
  size_t size() const { return size_; }

 private:
  enum class Kind { kNone, kHeap, kMapped, kBorrowed };
  void Release();

  Kind kind_ = Kind::kNone;
  std::byte* data_ = nullptr;
  size_t size_ = 0;
};

struct LayerWeights {
  TensorView attn_norm;  // [1, dim]
  TensorView wq;         // [q_dim, dim] (n_heads * head_dim rows)
  TensorView wk;         // [kv_dim, dim]
  TensorView wv;         // [kv_dim, dim]
  TensorView wo;         // [dim, q_dim]
  TensorView ffn_norm;   // [1, dim]
  TensorView w1;         // [hidden_dim, dim] gate
  TensorView w2;         // [dim, hidden_dim] down
  TensorView w3;         // [hidden_dim, dim] up
  TensorView bq;         // [1, q_dim] optional (qwen2)
  TensorView bk;         // [1, kv_dim] optional
  TensorView bv;         // [1, kv_dim] optional
  // [1, head_dim] optional (qwen3): RMSNorm weight of each q / k head; [1, q_dim] / [1, kv_dim]
  // with config.qk_norm_whole_row (olmoe): of each token's whole q / k row
  TensorView q_norm;
  TensorView k_norm;
  // [1, dim] optional (gemma): RMSNorm weights of the attention output and the FFN output, each
  // normed before it is added to the residual stream
  TensorView attn_post_norm;
  TensorView ffn_post_norm;
  // Mixture of experts (config.moe()), in place of w1, w2 and w3:
  TensorView router;      // [n_experts, dim] ffn_gate_inp: one score per expert
  ExpertsView gate_exps;  // [n_experts] x [expert_ffn_dim, dim]
  ExpertsView up_exps;    // [n_experts] x [expert_ffn_dim, dim]
  ExpertsView down_exps;  // [n_experts] x [dim, expert_ffn_dim]
  // A shared expert (config.shared_expert_ffn_dim > 0, qwen2moe): w1, w3 and w2 above are its
  // dense SwiGLU FFN ([shared_expert_ffn_dim, dim] ...), run for every token beside the routed
  // experts, and this [1, dim] vector (ffn_gate_inp_shexp) its gate: sigmoid(shexp_gate . x)
  // scales its output.
  TensorView shexp_gate;
  // Optional F32 biases (gpt-oss): the router's [1, n_experts] (added to its scores) and each
  // expert's row of [n_experts, width] (added after its gate / up / down matrix).
  TensorView router_b;
  TensorView gate_exps_b;  // [n_experts, expert_ffn_dim]
  TensorView up_exps_b;    // [n_experts, expert_ffn_dim]
  TensorView down_exps_b;  // [n_experts, dim]
  // [1, n_heads] optional F32 (gpt-oss attn_sinks.weight): one logit per query head that joins
  // its attention softmax (kernels::AttentionArgs::sinks).
  TensorView attn_sinks;
  // attn_output.bias: an encoder's (below) or a decoder's added after wo (gpt-oss).
  TensorView bo;  // [1, dim]
  // Encoder (config.encoder; forward_bert.cc), beside wq, wk, wv, wo, w3 (ffn_up) and w2
  // (ffn_down), bo and the q/k/v biases above; every one [1, width] F32:
  TensorView attn_out_norm;     // [1, dim] LayerNorm of the residual after attention
  TensorView attn_out_norm_b;   // [1, dim] its bias
  TensorView ffn_up_b;          // [1, hidden_dim]
  TensorView ffn_down_b;        // [1, dim]
  TensorView layer_out_norm;    // [1, dim] LayerNorm of the residual after the FFN
  TensorView layer_out_norm_b;  // [1, dim] its bias
};

struct Weights {
  WeightStorage storage;             // the bytes every view below points into
  TensorView token_embedding;        // [vocab_size, dim]
  std::vector<LayerWeights> layers;  // [n_layers]
  TensorView final_norm;             // [1, dim]
  TensorView classifier;             // [vocab_size, dim]; may alias token_embedding
  // [1, rotary_dims / 2] optional F32: divisors of each RoPE pair's frequency (Llama 3.1+
  // rope_freqs.weight; Phi-3's LongRoPE rope_factors_long or _short.weight, whichever the served
  // context picks; kernels::RopeFreqs::factors), shared by every layer.
  TensorView rope_freqs;
  // YaRN (config.rope_yarn): RopeFreqs::factors computed by the loader for the global layers'
  // base and, when the windowed layers have another, theirs (empty: the same); each pair's
  // divisor 1 / (s (1 - r_i) + r_i) (ModelConfig::rope_yarn), so kernels rotate at YaRN's
  // frequencies with their scale left at 1.
  std::vector<float> yarn_factors;
  std::vector<float> yarn_factors_swa;
  // Encoder only (config.encoder), in place of final_norm and classifier:
  TensorView position_embedding;  // [context_length, dim] learned absolute positions
  TensorView token_types;         // [n_types, dim] F32; every input is of type 0 (its row 0)
  TensorView embedding_norm;      // [1, dim] LayerNorm of token + type + position embeddings
  TensorView embedding_norm_b;    // [1, dim] its bias
  // An encoder's classification head (config.rank_outputs > 0; llama.cpp's rank pooling): the
  // [CLS] state x becomes cls_out . tanh(cls . x + cls_b) + cls_out_b; either matrix may be absent
  // (a file with cls only gives tanh(cls . x + cls_b), one with cls_out only cls_out . x + b).
  TensorView cls;        // [dim or rank_outputs, dim] cls.weight (BERT's pooler dense)
  TensorView cls_b;      // [1, cls.rows] F32, optional
  TensorView cls_out;    // [rank_outputs, dim] cls.output.weight (the classifier)
  TensorView cls_out_b;  // [1, rank_outputs] F32, optional
};

// A loaded llama-family model: its hyperparameters and weights.
struct LlamaModel {
  ModelConfig config;
  Weights weights;
};

// The matrices a forward pass may multiply a token by: the classifier, then each layer's wq, wk,
// wv, wo, w1, w2, w3 (a tied classifier is the token embedding), or for a mixture of experts its
// router, its shared expert's w1, w2, w3 and gate (when it has one) and every expert's gate, up
// and down matrix; a reranker's cls and cls_out. Absent tensors are left out.
std::vector<const TensorView*> MatricesOf(const Weights& weights);

// Bytes of the matrices one token multiplies by: what a decode step reads from memory, for
// bandwidth figures. Of a mixture of experts a token reads n_experts_used experts a layer: their
// share of the experts' bytes is counted.
uint64_t MatrixBytesPerToken(const ModelConfig& config, const Weights& weights);

// Checks every required tensor of `weights` is present with the shape `config` implies (and
// optional biases, when present, too). Loaders call it before handing a model out; errors name the
// tensor.
shared::Status ValidateLlamaWeights(const ModelConfig& config, const Weights& weights);

}  // namespace smallmind::worker
