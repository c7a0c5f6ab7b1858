// KernelTable: one function pointer per CPU op (a matmul per weight type), filled by dispatch.cc
// for one ISA and ExecMode; the engine calls ops only through it, each on an explicit RowRange.
// Tables are immutable plain data; kernels never allocate and are thread-safe on disjoint output
// rows.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "kernels/dtype.h"
#include "kernels/partition.h"

namespace smallmind::kernels {

// RoPE pair layouts.
enum class RopeLayout {
  kInterleaved,  // rotate (2i, 2i+1) inside each head (llama2.c, GGUF llama)
  kNeox,         // rotate (i, i + head_dim/2) inside each head (GPT-NeoX, qwen2)
};

// The frequencies RoPE turns each pair by: pair i (frequency index j = 2i of the n rotated
// dims) turns by pos * scale * theta^(-j / n) / factors[i], and its cos and sin are multiplied by
// mscale. Defaults: plain RoPE over the whole head (computed without the scale, the factors and
// mscale, bitwise as before they existed).
struct RopeFreqs {
  float theta = 10000.0f;  // the base (`rope.freq_base`)
  float scale = 1.0f;      // linear scaling (1 / `rope.scaling.factor`), llama.cpp's freq_scale
  // [n / 2] divisors of each pair's frequency (Llama 3.1+ `rope_freqs.weight`, Phi-3's LongRoPE
  // `rope_factors_long/short.weight`), or null.
  const float* factors = nullptr;
  // Partial rotary (`rope.dimension_count` < head_dim): only the first rot_dims dims of a head
  // rotate (as their own n-dim head: kNeox pairs (i, i + rot_dims / 2)), the rest pass through;
  // 0: the whole head.
  int rot_dims = 0;
  // llama.cpp's attn_factor (`rope.scaling.attn_factor`, Phi-3's LongRoPE scaling): cos and sin
  // are multiplied by it.
  float mscale = 1.0f;
};

// Element type of the K/V cache rows: float; IEEE half (converted from float with
// round-to-nearest-even when stored, exactly back to float when read); or 8-bit quants (kQ8: each
// block of 32 values of a row as int8 quants q = round-half-even(x / d), d = max|x| / 127, the
// scheme of the Q8 activations; a row is [kv_dim] quants then [kv_dim / 32] float scales d, and
// its "elements" are bytes). Half halves the bytes every decode step reads per cached position,
// kQ8 takes 1.125 bytes a value (0.56x of half) and needs head_dim % 32 == 0: its attention scores
// are integer dots of each head's quantized q with the cached quants. All are deterministic.
enum class KvType : uint32_t { kF32 = 1, kF16 = 2, kQ8 = 3 };
inline constexpr int KvTypeBytes(KvType t) {
  return t == KvType::kF16 ? 2 : t == KvType::kQ8 ? 1 : 4;
}
// The --kv-dtype name of t: f32, f16 or q8.
inline constexpr const char* KvTypeName(KvType t) {
  return t == KvType::kF16 ? "f16" : t == KvType::kQ8 ? "q8" : "f32";
}
// The KvType KvTypeName calls `name`, or nullopt.
inline std::optional<KvType> KvTypeFromName(std::string_view name) {
  for (KvType t : {KvType::kF16, KvType::kQ8, KvType::kF32}) {
    if (name == KvTypeName(t)) return t;
  }
  return std::nullopt;
}
// Elements of one cache row of kv_dim values (kQ8: quants and scales).
inline constexpr int64_t KvRowElems(KvType t, int64_t kv_dim) {
  return t == KvType::kQ8 ? kv_dim + kv_dim / 8 : kv_dim;
}
// Values per kQ8 scale; the largest head a kQ8 cache serves.
inline constexpr int kKvQ8Block = 32;
inline constexpr int kKvQ8HeadDimMax = 256;

// One layer of one sequence's paged K/V cache, read-only. The K row of position p starts
// Offset(p) elements of `type` after k, its V row as many after v. Rows are [kv_dim] elements:
// n_kv_heads heads of head_dim (kQ8: then the row's scales, scales_offset bytes in).
struct KvView {
  const void* k = nullptr;               // K row of slot 0 of block id 0, this layer
  const void* v = nullptr;               // V row of slot 0 of block id 0, this layer
  KvType type = KvType::kF32;            // element type of the rows
  std::span<const int32_t> block_table;  // block ids covering positions [0, size * block_size)
  int block_size = 0;                    // positions per block
  int64_t block_stride = 0;              // elements from block id b to block id b + 1
  int64_t row_stride = 0;                // elements from slot s to slot s + 1 (>= kv_dim)
  int64_t scales_offset = 0;  // kQ8: bytes from a row's first quant to its first float scale

  int64_t Offset(int pos) const {
    return block_table[pos / block_size] * block_stride + (pos % block_size) * row_stride;
  }
};

// Rows ((token, head) pairs) the scores scratch of an attention call holds at least: every head of
// a token of a model of up to 16 heads fits one pass over the cache.
inline constexpr int kAttentionHeadsPerPass = 16;
// Tokens of one sequence worth giving an attention kernel call together (a prefill chunk's): it
// walks the cache once for all of them when its scratch holds their rows (the AVX2 kernel in
// walks of 8 of them, the AVX-512 one of all 16).
inline constexpr int kAttentionTileTokens = 16;

// Causal attention of one sequence's slice of tokens over its cache.
struct AttentionArgs {
  const float* q = nullptr;  // n_tokens rows of n_heads * head_dim (QStride() apart), rotated
  float* out = nullptr;      // likewise
  // [scores_size] scratch owned by the calling thread: rows of start_pos + n_tokens floats, at
  // least kAttentionHeadsPerPass of them. A kernel scores as many rows in one pass over the cache
  // as fit (several tokens of a prefill chunk share each K/V row read).
  float* scores = nullptr;
  int64_t scores_size = 0;  // floats; 0: kAttentionHeadsPerPass rows
  // Token t sits at position start_pos + t and attends to FirstPos(start_pos + t)..start_pos + t.
  int n_tokens = 0;
  int start_pos = 0;
  int n_heads = 0;  // query heads; query head h reads KV head h / (n_heads / n_kv_heads)
  int n_kv_heads = 0;
  int head_dim = 0;
  // Floats from token t's q (and out) row to token t + 1's; 0: n_heads * head_dim. A call over a
  // run of the model's heads (q, out and kv pointing at its first head) sets the model's.
  int q_stride = 0;
  KvView kv;  // must already hold K/V of positions [FirstPos(start_pos), start_pos + n_tokens)
  // Sliding window: 0, none; else a query at position p sees positions (p - window, p] only, as
  // llama.cpp masks them (LLAMA_SWA_TYPE_STANDARD: masked when p - p0 >= window). Kernels read no
  // cache row (nor block table entry) of a position no query of the call sees.
  int window = 0;
  // What each q.k dot is divided by; 0: sqrt(head_dim). (gemma: sqrt of its query pre-attention
  // scalar, which llama.cpp applies as a scale of q.)
  float score_divisor = 0.0f;
  // Attention logit soft-capping (gemma2's attn_logit_softcapping): 0, none; else each divided
  // score s becomes softcap * tanh(s / softcap) before the softmax (std::tanh, in every kernel).
  float softcap = 0.0f;
  // Attention sinks (gpt-oss's attn_sinks.weight): null, none; else [n_heads] logits, one per query
  // head of the call (a call over a run of heads points at its first head's), each joining its
  // head's softmax as one more logit that has no value row: the probabilities of the positions
  // are exp(s_p - m) / (sum_p exp(s_p - m) + exp(sink - m)) with m the max of the scores and the
  // sink, as llama.cpp's soft_max_ext with sinks. The sink is not divided by ScoreDivisor() nor
  // soft-capped.
  const float* sinks = nullptr;

  int64_t QStride() const { return q_stride > 0 ? q_stride : int64_t{n_heads} * head_dim; }
  // The first position a query at `pos` sees.
  int FirstPos(int pos) const { return window > 0 && pos >= window ? pos - window + 1 : 0; }
  float ScoreDivisor() const {
    return score_divisor > 0 ? score_divisor : std::sqrt(static_cast<float>(head_dim));
  }
};

// y[t, r] = dot(w[r, :], x[t, :]) for t < n_tokens and r in rows. w: [out_dim, in_dim] row-major of
// the weight type of the op, or the op's packed layout when it has a PackFn; y: [n_tokens,
// out_dim]. x: [n_tokens, in_dim] floats, or for an op whose input is MatmulInput::kQ8, n_tokens
// rows of Q8ActRowBytes(in_dim) bytes (kernels/q8_act.h), or for kQ8Octets those rows' octets
// (Q8ActOctetsBytes(n_tokens, in_dim) bytes) when n_tokens > 1.
using MatmulFn = void (*)(const void* w, const void* x, float* y, int n_tokens, int in_dim,
                          int out_dim, RowRange rows);
// What a MatmulFn reads as x. The three Q8 row schemes share one layout (kernels/q8_act.h) and
// are the activation schemes llama.cpp's CPU backend pairs with each weight type, so the same file
// gives the same logits there and here (tests/worker/conformance):
enum class MatmulInput {
  kF32,  // float rows
  // Rows from KernelTable::quantize_q8: llama.cpp's q8_0 (blocks of 32, d rounded to fp16; Q8_0,
  // Q4_0, Q5_0, IQ4_NL weights).
  kQ8,
  kQ8Octets,  // kQ8 rows for one token; for n_tokens > 1 those rows as octets (PackQ8ActOctetsRef)
  // Rows from quantize_q8_1: llama.cpp's q8_1 (kQ8 with s = fp16(d * sum) from the unrounded d;
  // Q4_1, Q5_1 weights, whose min meets s).
  kQ8_1,
  // Rows from quantize_q8_k: llama.cpp's q8_K (one scale per 256 from the signed max, quants
  // clamped to 127) written as 8 blocks of 32 sharing that scale; the K-quants and IQ4_XS.
  kQ8K,
};
// Repacks a [rows, cols] matrix of the op's weight type into the layout its fn reads: dst holds
// packed_bytes(rows, cols) bytes (64-byte aligned).
using PackFn = void (*)(const void* src, void* dst, int rows, int cols);
using PackedBytesFn = size_t (*)(int rows, int cols);
struct MatmulOp {
  MatmulFn fn = nullptr;
  MatmulInput input = MatmulInput::kF32;
  PackFn pack = nullptr;  // nullptr: fn reads the weights as stored (GGUF layout)
  PackedBytesFn packed_bytes = nullptr;
};
// Converts float rows x: [n, in_dim] (in_dim a multiple of 32) into Q8 rows xq: [n,
// Q8ActRowBytes(in_dim)] bytes, for the rows in `tokens`.
using QuantizeQ8Fn = void (*)(const float* x, void* xq, int in_dim, RowRange tokens);
// out: [n] = the n elements (a multiple of the type's block size) of one row of a tensor of the
// table entry's type, dequantized exactly as kernels/ref/dequant_ref.h does.
using DequantRowFn = void (*)(const void* row, float* out, int n);
// out[t, :] = weight * x[t, :] / sqrt(mean(x[t, :]^2) + eps) for t in tokens; x, out: [n, dim]
// (out may equal x).
using RmsNormFn = void (*)(const float* x, const float* weight, float* out, int dim, float eps,
                           RowRange tokens);
// Rotates x: [n_tokens, n_heads, head_dim] in place; token t at positions[t]. Rows are the flat
// (token, head) pairs r = t * n_heads + h.
using RopeFn = void (*)(float* x, const int32_t* positions, int n_heads, int head_dim,
                        const RopeFreqs& freqs, RopeLayout layout, RowRange rows);
// x: [n_rows, row_len]; each row in rows becomes softmax(row), in place.
using SoftmaxFn = void (*)(float* x, int row_len, RowRange rows);
// gate[t, i] = silu(gate[t, i]) * up[t, i] for t in tokens; gate, up: [n, hidden].
using SwiGluFn = void (*)(float* gate, const float* up, int hidden, RowRange tokens);
// gpt-oss's clamped SwiGLU (llama.cpp's ggml_swiglu_oai): with g = min(gate[t, i], limit) and
// u = clamp(up[t, i], -limit, limit), gate[t, i] = g / (1 + exp(-alpha g)) * (u + 1).
using SwiGluOaiFn = void (*)(float* gate, const float* up, int hidden, float alpha, float limit,
                             RowRange tokens);
// gate[t, i] = gelu(gate[t, i]) * up[t, i] for t in tokens, gelu llama.cpp's tanh approximation
// through its half table (kernels/ref/gelu_ref.h); gate, up: [n, hidden].
using GeGluFn = void (*)(float* gate, const float* up, int hidden, RowRange tokens);
// x[t, i] = gelu(x[t, i]) for t in tokens, ungated (BERT's feed-forward), through the same half
// table as GeGluFn; x: [n, hidden].
using GeluFn = void (*)(float* x, int hidden, RowRange tokens);
// out[t, :] = (x[t, :] - mean) / sqrt(var + eps) * weight + bias for t in tokens (BERT's
// LayerNorm, as llama.cpp's ggml_norm then mul and add; kernels/ref/layernorm_ref.h); bias may be
// null; out may equal x.
using LayerNormFn = void (*)(const float* x, const float* weight, const float* bias, float* out,
                             int dim, float eps, RowRange tokens);
// x[t, :] *= s for t in tokens; x: [n, dim].
using ScaleFn = void (*)(float* x, int dim, float s, RowRange tokens);
// x[t, i] = cap * tanh(x[t, i] * (1 / cap)) for t in tokens; x: [n, dim].
using SoftCapFn = void (*)(float* x, int dim, float cap, RowRange tokens);
// x[t, :] += delta[t, :] for t in tokens; x, delta: [n, dim].
using AddFn = void (*)(float* x, const float* delta, int dim, RowRange tokens);
// x[t, :] += bias[:] for t in tokens; x: [n, dim], bias: [dim].
using AddBiasFn = void (*)(float* x, const float* bias, int dim, RowRange tokens);
// Rows are the flat (token, query head) pairs r = t * n_heads + h of args.
using AttentionFn = void (*)(const AttentionArgs& args, RowRange rows);
// Quantizes the tokens of octets [first, last) of float rows x: [n_tokens, in_dim] straight into
// octets (Q8ActOctetsBytes(n_tokens, in_dim) bytes): the bytes PackQ8ActOctetsRef
// (kernels/ref/quantize_ref.h) makes of QuantizeQ8Fn's rows, for the matmuls whose input is
// MatmulInput::kQ8Octets.
using QuantizeQ8OctetsFn = void (*)(const float* x, void* octets, int in_dim, int n_tokens,
                                    int first, int last);
// out[i] = x[i] as IEEE half, round-to-nearest-even, for i < n (K/V rows into a kF16 cache).
using F32ToF16Fn = void (*)(const float* x, uint16_t* out, int64_t n);
// Blocks of 32 of x[0, n) (n % 32 == 0) as kQ8 quants qs[n] and scales d[n / 32] (K/V rows into
// a kQ8 cache).
using F32ToQ8Fn = void (*)(const float* x, int8_t* qs, float* d, int64_t n);

// Weight types with a matmul slot, in slot order.
inline constexpr DType kWeightTypes[] = {
    DType::kF32,  DType::kF16,  DType::kBF16,   DType::kQ8_0, DType::kQ4_0,   DType::kQ4_K,
    DType::kQ6_K, DType::kQ5_K, DType::kIQ4_XS, DType::kQ5_0, DType::kIQ4_NL, DType::kQ4_1,
    DType::kQ5_1, DType::kQ2_K, DType::kQ3_K,   DType::kMXFP4};
inline constexpr int kNumWeightTypes = sizeof(kWeightTypes) / sizeof(kWeightTypes[0]);

// Slot of `t` in kWeightTypes, or -1.
constexpr int WeightSlot(DType t) {
  for (int i = 0; i < kNumWeightTypes; i++) {
    if (kWeightTypes[i] == t) return i;
  }
  return -1;
}

struct KernelTable {
  MatmulOp matmul[kNumWeightTypes];                 // by WeightSlot
  DequantRowFn dequant_row[kNumWeightTypes] = {};   // by WeightSlot (embedding lookup)
  QuantizeQ8Fn quantize_q8 = nullptr;               // set when some matmul reads MatmulInput::kQ8
  QuantizeQ8OctetsFn quantize_q8_octets = nullptr;  // ... reads MatmulInput::kQ8Octets
  QuantizeQ8Fn quantize_q8_1 = nullptr;             // ... reads MatmulInput::kQ8_1
  QuantizeQ8Fn quantize_q8_k = nullptr;  // ... reads MatmulInput::kQ8K (in_dim % 256 == 0)
  RmsNormFn rmsnorm = nullptr;
  RopeFn rope = nullptr;
  SoftmaxFn softmax = nullptr;
  SwiGluFn swiglu = nullptr;
  SwiGluOaiFn swiglu_oai = nullptr;
  GeGluFn geglu = nullptr;
  GeluFn gelu = nullptr;
  LayerNormFn layernorm = nullptr;
  ScaleFn scale = nullptr;
  SoftCapFn soft_cap = nullptr;
  AddFn add = nullptr;
  AddBiasFn add_bias = nullptr;
  AttentionFn attention = nullptr;
  F32ToF16Fn f32_to_f16 = nullptr;
  F32ToQ8Fn f32_to_q8 = nullptr;

  // The matmul for weights of type t, or nullptr when the table has none.
  const MatmulOp* MatmulFor(DType t) const {
    const int s = WeightSlot(t);
    return s >= 0 && matmul[s].fn != nullptr ? &matmul[s] : nullptr;
  }
  // The row dequantizer for type t, or nullptr.
  DequantRowFn DequantRowFor(DType t) const {
    const int s = WeightSlot(t);
    return s >= 0 ? dequant_row[s] : nullptr;
  }
};

// The scalar reference kernels (kernels/ref/): the oracles every SIMD variant is tested against.
// Every matmul reads float input.
KernelTable RefKernelTable();

}  // namespace smallmind::kernels
