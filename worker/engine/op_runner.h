// OpRunner: runs the kernels of one KernelTable over the ThreadPool for one engine step, each op
// split by output rows, (token, head) rows or tokens on as many threads as its size justifies.
// Made by Engine::Step on the engine thread for one step; not thread-safe.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>

#include "kernels/exec_mode.h"
#include "kernels/kernels.h"
#include "worker/engine/activations.h"
#include "worker/engine/op_profile.h"
#include "worker/engine/packed_weights.h"
#include "worker/engine/thread_pool.h"
#include "worker/model/weights.h"

namespace smallmind::worker {

struct OpLimits {
  kernels::ExecMode mode = kernels::ExecMode::kParallel;
  int max_threads = 1;           // threads any op may use (<= the pool's)
  int min_rows_per_thread = 1;   // parallel_threshold: an op with fewer rows runs on one thread
  OpProfile* profile = nullptr;  // where each op's time is added (null: not timed)
};

// The input of one or more matmuls: float rows, quantized once (into the step's shared Q8 buffer,
// or its octets buffer) the first time a kernel that reads Q8 rows (or octets) needs them. Valid
// while x is unchanged and no other input has been quantized since.
struct MatmulSource {
  const float* x;  // [n_tokens, dim]
  int n_tokens;
  int dim;
  // OpRunner's quantization count when x was last quantized into each Q8 row scheme (kQ8, kQ8_1,
  // kQ8K) and into octets; -1: never.
  int64_t q8_version[3] = {-1, -1, -1};
  int64_t octets_version = -1;
};

class OpRunner {
 public:
  // `table`, `packed` (the table's repacked matrices), `pool` and `act` must outlive the runner;
  // `act` provides the Q8 input buffer and the per-thread attention scratch.
  OpRunner(const kernels::KernelTable& table, const PackedWeights& packed, ThreadPool* pool,
           const OpLimits& limits, Activations* act);

  const kernels::KernelTable& table() const { return table_; }
  OpProfile* profile() const { return limits_.profile; }

  static MatmulSource Source(const float* x, int n_tokens, int dim) {
    return MatmulSource{x, n_tokens, dim};
  }

  // y: [n_tokens, w.rows] = x . w^T.
  void Matmul(const TensorView& w, MatmulSource* in, float* y);
  // Several matmuls of the same input in one parallel region (one barrier): q, k and v, or gate
  // and up. Each thread takes a contiguous share of all their row groups.
  struct MatmulJob {
    const TensorView& w;
    float* y;  // [n_tokens, w.rows]
  };
  void Matmuls(std::initializer_list<MatmulJob> jobs, MatmulSource* in);
  // A mixture of experts' grouped matmuls: each job's rows of `in` times its expert's matrix, all
  // jobs in one parallel region over their row groups (each expert's weights are read once for
  // all the rows routed to it), `in` quantized once for all of them. Where a kernel reads octets
  // for several rows (the 512-bit Q8_0 / Q4_0 tiles), each expert's rows go into octets of their
  // own from a whole octet on (an octet holds 8 consecutive rows from its first), one expert
  // after the other, an expert's gate and up sharing theirs. Each output element is the one
  // Matmul would compute for that row alone.
  void ExpertMatmuls(std::span<const ExpertMatmul> jobs, MatmulSource* in);
  // out[t, :] = sum over slots j = 0, 1, .., k - 1 in that order of weight[t * k + j] *
  // y[row[t * k + j], :] for t < n: a token's experts combined in a fixed order whatever the batch.
  void WeightedRowSum(const float* y, const int32_t* row, const float* weight, int k, int n,
                      int dim, float* out);
  // out[t, :] += scale[t] * y[t, :] for t < n, each product rounded then added (llama.cpp's
  // ggml_mul then ggml_add): a shared expert's gated output joining the routed experts' sum.
  void AddScaledRows(float* out, const float* y, const float* scale, int n, int dim);
  // out[t, :] = rmsnorm(x[t, :]) * weight for t < n.
  void RmsNorm(const float* x, const TensorView& weight, float* out, int n, int dim, float eps);
  // Rotates the n_heads heads of each of n tokens of x in place.
  void Rope(float* x, const int32_t* positions, int n, int n_heads, int head_dim,
            const kernels::RopeFreqs& freqs, kernels::RopeLayout layout);
  // out[t, :] = layernorm(x[t, :]) * weight + bias for t < n (encoders).
  void LayerNorm(const float* x, const TensorView& weight, const TensorView& bias, float* out,
                 int n, int dim, float eps);
  // x[t, :] = gelu(x[t, :]) for t < n (an encoder's ungated feed-forward).
  void Gelu(float* x, int n, int hidden);
  void SwiGlu(float* gate, const float* up, int n, int hidden);
  // gate = act(gate) * up with the family's gated activation (SwiGlu, GeGlu or gpt-oss's clamped
  // SwiGLU). gate, up: [n, hidden].
  void GatedActivation(FfnActivation act, float* gate, const float* up, int n, int hidden);
  void GeGlu(float* gate, const float* up, int n, int hidden);
  // x[t, :] *= s for t < n.
  void Scale(float* x, int n, int dim, float s);
  // x[t, i] = cap * tanh(x[t, i] / cap) for t < n (split over parts of rows too: a decode step's
  // one row of logits is a vocabulary wide).
  void SoftCap(float* x, int n, int dim, float cap);
  void Add(float* x, const float* delta, int n, int dim);
  void AddBias(float* x, const TensorView& bias, int n);
  // x[i, :] = row tokens[i] of `table` (any weight type), dequantized.
  void Embed(const TensorView& table, std::span<const int32_t> tokens, float* x);
  // Attention of every seq of the step in one parallel region over work items of whole tokens
  // (a decode token, or up to kAttentionTileTokens tokens of a prefill chunk, which a kernel call
  // walks the cache for once). Scores scratch comes from the runner.
  void Attention(std::span<const kernels::AttentionArgs> args);

 private:
  // Threads for an op of n_rows rows of `work_per_row` multiply-adds (or element ops) each.
  int Threads(int n_rows, int64_t work_per_row) const;
  // Quantizes in into the Q8 rows of `input` (kQ8, kQ8_1 or kQ8K: act_->xq, xq_1 or xq_k) unless
  // they hold it already, and returns them ...
  const uint8_t* QuantizedRows(MatmulSource* in, kernels::MatmulInput input);
  // ... or into act_->xq_octets as octets (kernels/q8_act.h: kQ8Octets matmuls of > 1 token).
  void QuantizeOctets(MatmulSource* in);
  // ... or each expert job's rows (jobs with octet_first[i] >= 0; consecutive jobs with the same
  // octet_first share them) into act_->xq_octets from octet octet_first[i] on (ExpertMatmuls).
  void QuantizeExpertOctets(std::span<const ExpertMatmul> jobs, const int32_t* octet_first,
                            const MatmulSource* in);
  // How the row-parallel ops (matmul row groups, attention items) split: fixed on the
  // deterministic path (STYLE §14); dynamic parts on the parallel path, where causal rows are
  // uneven and a thread the OS preempts (the gRPC threads share these cores) then holds up one
  // small part rather than half the op. Each output row is computed alone either way, so both
  // splits give the same bits.
  Partition RowsPartition() const;

  const kernels::KernelTable& table_;
  const PackedWeights& packed_;
  ThreadPool* pool_;
  const OpLimits limits_;
  Activations* act_;
  int64_t q8_version_[3] = {0, 0, 0};  // quantizations into act_->xq, xq_1, xq_k so far
  int64_t octets_version_ = 0;         // ... into act_->xq_octets
};

}  // namespace smallmind::worker
