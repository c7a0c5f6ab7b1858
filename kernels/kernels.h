// KernelTable: one function pointer per CPU op, filled once (today with the scalar reference
// kernels of kernels/ref/) and passed to the engine, which calls ops only through it. Every op
// computes the explicit RowRange it is given, so a caller may split the work among threads. Kernels
// never allocate. A table is immutable plain data; the ops are thread-safe on disjoint output rows.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/dtype.h"
#include "kernels/partition.h"

namespace smallmind::kernels {

// RoPE pair layouts.
enum class RopeLayout {
  kInterleaved,  // rotate (2i, 2i+1) inside each head (llama2.c, GGUF llama)
  kNeox,         // rotate (i, i + head_dim/2) inside each head (GPT-NeoX, qwen2)
};

// One layer of one sequence's paged K/V cache, read-only. The K row of position p starts at
//   k + block_table[p / block_size] * block_stride + (p % block_size) * row_stride
// and its V row at the same offset from v. Rows are [kv_dim] floats: n_kv_heads heads of head_dim.
struct KvView {
  const float* k = nullptr;              // K row of slot 0 of block id 0, this layer
  const float* v = nullptr;              // V row of slot 0 of block id 0, this layer
  std::span<const int32_t> block_table;  // block ids covering positions [0, size * block_size)
  int block_size = 0;                    // positions per block
  int64_t block_stride = 0;              // floats from block id b to block id b + 1
  int64_t row_stride = 0;                // floats from slot s to slot s + 1 (>= kv_dim)

  const float* KRow(int pos) const { return k + Offset(pos); }
  const float* VRow(int pos) const { return v + Offset(pos); }
  int64_t Offset(int pos) const {
    return block_table[pos / block_size] * block_stride + (pos % block_size) * row_stride;
  }
};

// Causal attention of one sequence's slice of tokens over its cache.
struct AttentionArgs {
  const float* q = nullptr;  // [n_tokens, n_heads * head_dim], already rotated
  float* out = nullptr;      // [n_tokens, n_heads * head_dim]
  float* scores = nullptr;   // [start_pos + n_tokens] scratch owned by the calling thread
  int n_tokens = 0;  // token t sits at position start_pos + t and attends to 0..start_pos + t
  int start_pos = 0;
  int n_heads = 0;  // query heads; query head h reads KV head h / (n_heads / n_kv_heads)
  int n_kv_heads = 0;
  int head_dim = 0;
  KvView kv;  // must already hold K/V of positions [0, start_pos + n_tokens)
};

// y[t, r] = dot(w[r, :], x[t, :]) for t < n_tokens and r in rows. w: [out_dim, in_dim] row-major of
// the table entry's dtype; x: [n_tokens, in_dim]; y: [n_tokens, out_dim].
using MatmulFn = void (*)(const void* w, const float* x, float* y, int n_tokens, int in_dim,
                          int out_dim, RowRange rows);
// out[t, :] = weight * x[t, :] / sqrt(mean(x[t, :]^2) + eps) for t in tokens; x, out: [n, dim]
// (out may equal x).
using RmsNormFn = void (*)(const float* x, const float* weight, float* out, int dim, float eps,
                           RowRange tokens);
// Rotates x: [n_tokens, n_heads, head_dim] in place; token t at positions[t]. Rows are the flat
// (token, head) pairs r = t * n_heads + h.
using RopeFn = void (*)(float* x, const int32_t* positions, int n_heads, int head_dim, float theta,
                        RopeLayout layout, RowRange rows);
// x: [n_rows, row_len]; each row in rows becomes softmax(row), in place.
using SoftmaxFn = void (*)(float* x, int row_len, RowRange rows);
// gate[t, i] = silu(gate[t, i]) * up[t, i] for t in tokens; gate, up: [n, hidden].
using SwiGluFn = void (*)(float* gate, const float* up, int hidden, RowRange tokens);
// x[t, :] += delta[t, :] for t in tokens; x, delta: [n, dim].
using AddFn = void (*)(float* x, const float* delta, int dim, RowRange tokens);
// Rows are the flat (token, query head) pairs r = t * n_heads + h of args.
using AttentionFn = void (*)(const AttentionArgs& args, RowRange rows);

struct KernelTable {
  MatmulFn matmul_f32 = nullptr;  // quantized weight types join with their kernels (issue 3)
  RmsNormFn rmsnorm = nullptr;
  RopeFn rope = nullptr;
  SoftmaxFn softmax = nullptr;
  SwiGluFn swiglu = nullptr;
  AddFn add = nullptr;
  AttentionFn attention = nullptr;

  // The matmul for weights of type t, or nullptr when the table has none.
  MatmulFn MatmulFor(DType t) const { return t == DType::kF32 ? matmul_f32 : nullptr; }
};

// The scalar reference kernels (kernels/ref/): the oracles every SIMD variant is tested against.
KernelTable RefKernelTable();

}  // namespace smallmind::kernels
