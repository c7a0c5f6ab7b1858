// The AVX2 (+FMA, F16C) kernels and their KernelTable. Chosen by kernels/dispatch.cc when the CPU
// has AVX2; signatures as in kernels/kernels.h; thread-safe on disjoint output rows. Only the
// *_avx2.cc files are built with AVX2 enabled, so callers reach these through the table.
#pragma once

#include "kernels/exec_mode.h"
#include "kernels/kernels.h"

namespace smallmind::kernels::avx2 {

// The table for `mode`. Every AVX2 kernel is batch-invariant, so both modes get the same table:
// the quantized types' matmuls (Q8_0, Q4_0, Q4_K, Q5_K, Q6_K) read Q8 activations (integer dot
// products) and packed weights, the float types float activations (kernel_table_avx2.cc says why
// this is deterministic).
KernelTable Avx2KernelTable(ExecMode mode);

// The K-quant matmuls of one integer core, over kQ8K rows and the packed layouts below
// (PackQ4_Kx8, PackQ5_Kx8, PackQ6_Kx8, PackIQ4_XSx8).
// Q3_K runs the q6_k function on its blocks widened to Q6_K (PackQ3_KAsQ6_Kx8).
struct KQuantFns {
  MatmulFn q4_k = nullptr;
  MatmulFn q5_k = nullptr;
  MatmulFn q6_k = nullptr;
  MatmulFn iq4_xs = nullptr;
  MatmulFn q2_k = nullptr;  // PackQ2_Kx8's layout (kernels/x86/q2_kx8.h)
};
// `table` with the Q8_0, Q4_0 and K-quant matmuls set to these functions over Q8 activations
// and the packed layouts of the pack functions below: this table's own.
KernelTable WithPackedMatmuls(KernelTable table, MatmulFn q8_0, MatmulFn q4_0, const KQuantFns& k);
// The same for the VNNI flavours (kernels/avx512/, kernels/avx_vnni/), whose kernels give these
// kernels' bits: Q8_0 and Q4_0 the ops given (made by the functions below), the K-quants packed
// as above.
KernelTable WithVnniPackedMatmuls(KernelTable table, MatmulOp q8_0, MatmulOp q4_0,
                                  const KQuantFns& k);
// A Q8_0 matmul over Q8 activations on Q8_0 packed 8 rows a group with unsigned quants
// (PackQ8_0x8u: the 256-bit VNNI cores') or 16 (PackQ8_0x16u: the 512-bit and AMX kernels'); a
// Q4_0 one on Q4_0 packed 8 rows a group (PackQ4_0x8: the 256-bit cores') or 16 (PackQ4_0x16:
// the 512-bit kernel's). Q8_0x8uOp's kernels read kQ8Octets; the others `input`: the kQ8 rows or
// kQ8Octets.
MatmulOp Q8_0x8uOp(MatmulFn fn);
// `table` with the Q5_0, IQ4_NL and MXFP4 matmuls set to its Q8_0 one (same kernel, input and
// packed layout) over those weights widened to Q8_0 blocks as they are packed (matmul_q8_avx2.cc
// says why that gives their own dot products); unchanged when its Q8_0 op packs no layout of
// WidenedQ8_0Pack's. Every table that sets a Q8_0 matmul ends with it.
KernelTable WithWidenedQ8_0Matmuls(KernelTable table);
// The packer writing the layout of `q8_0_pack` (PackQ8_0x8, PackQ8_0x8u or PackQ8_0x16u) from
// weights of type `source` (Q8_0, Q5_0, IQ4_NL or MXFP4), or nullptr for any other pair.
PackFn WidenedQ8_0Pack(PackFn q8_0_pack, DType source);
MatmulOp Q8_0x16uOp(MatmulFn fn, MatmulInput input);
MatmulOp Q4_0x8Op(MatmulFn fn, MatmulInput input);
MatmulOp Q4_0x16Op(MatmulFn fn, MatmulInput input);

// Float-activation matmuls of the float types (matmul_avx2.cc). Reduction order of y[t, r]: K in
// chunks of 256 left to right, y = s0 + s1 + ... in that order; chunk sum s = 8 lane accumulators
// (element k in lane k % 8, fused multiply-add of the reference-dequantized weight and x, k
// ascending, a last partial group zero-padded) folded as ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)).
void MatmulF32Avx2(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows);
void MatmulF16Avx2(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows);
void MatmulBf16Avx2(const void* w, const void* x, float* y, int n_tokens, int in_dim, int out_dim,
                    RowRange rows);

// Q8_0/Q4_0 matmuls of both paths (Q5_0 / IQ4_NL: the Q8_0 ones on widened weights)
// (matmul_q8_avx2.cc): activations quantized per 32 (kernels/q8_act.h), weights repacked 8 rows at
// a time (layout in q8_0x8.h), exact integer block dot products; y[t, r] = sum over blocks in
// order, in one float, of fma(isum, dw * dx). The quantization is bitwise QuantizeQ8ActRef
// (QuantizeQ8_1Avx2: QuantizeQ8_1ActRef).
void QuantizeQ8Avx2(const float* x, void* xq, int in_dim, RowRange tokens);
void QuantizeQ8_1Avx2(const float* x, void* xq, int in_dim, RowRange tokens);
// QuantizeQ8Avx2's rows as octets (quantize_avx2.cc): the bytes of PackQ8ActOctetsRef of them
// (kernels/q8_act.h).
void QuantizeQ8OctetsAvx2(const float* x, void* octets, int in_dim, int n_tokens, int first,
                          int last);
void PackQ8_0x8(const void* src, void* dst, int rows, int cols);
void PackQ4_0x8(const void* src, void* dst, int rows, int cols);
size_t PackedQ8_0x8Bytes(int rows, int cols);
// Q8_0 packed for the VNNI cores (vnni_cores.h): PackQ8_0x8's layout with each quant stored
// as the unsigned q + 128 (Q8_0x8u).
void PackQ8_0x8u(const void* src, void* dst, int rows, int cols);
size_t PackedQ8_0x8uBytes(int rows, int cols);
// Q8_0 packed for the 512-bit and AMX kernels (kernels/avx512/x16_zmm.h,
// kernels/amx/amx_q8_0.h): 16 rows a group, quants as the unsigned q + 128 (Q8_0x16u, layout in
// q8_0x8.h); Q4_0 for the 512-bit one: 16 rows a group (Q4_0x16).
void PackQ8_0x16u(const void* src, void* dst, int rows, int cols);
size_t PackedQ8_0x16uBytes(int rows, int cols);
void PackQ4_0x16(const void* src, void* dst, int rows, int cols);
size_t PackedQ4_0x16Bytes(int rows, int cols);
size_t PackedQ4_0x8Bytes(int rows, int cols);
void MatmulQ8_0x8Q8Avx2(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows);
void MatmulQ4_0x8Q8Avx2(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows);
// IQ4_NL and MXFP4 on their own 4-bit codes (the AVX2 and AVX-512 tables'; the AVX-VNNI and AMX
// tables widen them to their Q8_0 layouts): PackIQ4_NLx8 / PackMXFP4x8 write the Lut4x8 blocks of
// q8_0x8.h (160 B for 8 rows' 32 columns against 272 widened), and the matmuls look each code up in
// the type's levels; the same exact block dot products and float steps as the Q8_0 kernel on the
// widened blocks, with every MXFP4 exponent exact.
void PackIQ4_NLx8(const void* src, void* dst, int rows, int cols);
void PackMXFP4x8(const void* src, void* dst, int rows, int cols);
size_t PackedLut4x8Bytes(int rows, int cols);
// The same 16 rows a group for the 512-bit kernels (Lut4x16: 320 B against Q8_0x16u's 544).
void PackIQ4_NLx16(const void* src, void* dst, int rows, int cols);
void PackMXFP4x16(const void* src, void* dst, int rows, int cols);
size_t PackedLut4x16Bytes(int rows, int cols);
void MatmulIQ4_NLx8Q8Avx2(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                          int out_dim, RowRange rows);
void MatmulMXFP4x8Q8Avx2(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                         int out_dim, RowRange rows);

// Q4_K/Q5_K/Q6_K matmuls of both paths (matmul_kquant_avx2.cc): the same scheme over the packed
// layouts kquant_x8.h states (the size of the source), bitwise MatmulQ4_KQ8ActRef /
// MatmulQ5_KQ8ActRef / MatmulQ6_KQ8ActRef: y[t, r] = per activation block of 32 in order, in one
// float, fma(float(exact scaled isum), d * dx, y) (Q4_K, Q5_K then fma(-(dmin * m), s, y)).
void PackQ4_Kx8(const void* src, void* dst, int rows, int cols);
void PackQ5_Kx8(const void* src, void* dst, int rows, int cols);
void PackQ6_Kx8(const void* src, void* dst, int rows, int cols);
void PackIQ4_XSx8(const void* src, void* dst, int rows, int cols);
size_t PackedQ4_Kx8Bytes(int rows, int cols);
size_t PackedQ5_Kx8Bytes(int rows, int cols);
size_t PackedQ6_Kx8Bytes(int rows, int cols);
size_t PackedIQ4_XSx8Bytes(int rows, int cols);
void MatmulQ4_Kx8Q8Avx2(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows);
void MatmulQ5_Kx8Q8Avx2(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows);
// IQ4_XS: bitwise MatmulIQ4_XSQ8ActRef, fma(float((ls - 32) * isum(levels)), d * dx, y).
void MatmulIQ4_XSx8Q8Avx2(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                          int out_dim, RowRange rows);
void MatmulQ6_Kx8Q8Avx2(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows);
// Q3_K packed as Q6_Kx8 of its exact widening (WidenQ3_KToQ6_K), for the Q6_K kernels.
void PackQ3_KAsQ6_Kx8(const void* src, void* dst, int rows, int cols);
// Q2_K (kernels/x86/q2_kx8.h): bitwise MatmulQ2_KQ8ActRef, per super-block fma(float(isum), d *
// dx, y) then fma(-float(msum), dmin * dx, y).
void PackQ2_Kx8(const void* src, void* dst, int rows, int cols);
size_t PackedQ2_Kx8Bytes(int rows, int cols);
void MatmulQ2_Kx8Q8Avx2(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows);

// Q4_1 / Q5_1 over kQ8_1 rows (matmul_q8_avx2.cc, the maddubs core on Q4_1x8 / Q8_1x8,
// kernels/x86/q8_0x8.h): bitwise MatmulQ4_1Q8ActRef / MatmulQ5_1Q8ActRef, per block
// fma(isum, dw * dx, y) then fma(m, s, y). Every x86 table runs these (their one integer step per
// block is the AVX2 maddubs core's; llama.cpp's q8_1 blocks carry no VNNI start).
void PackQ4_1x8(const void* src, void* dst, int rows, int cols);
void PackQ5_1AsQ8_1x8(const void* src, void* dst, int rows, int cols);
size_t PackedQ4_1x8Bytes(int rows, int cols);
size_t PackedQ8_1x8Bytes(int rows, int cols);
void MatmulQ4_1x8Q8Avx2(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows);
void MatmulQ8_1x8Q8Avx2(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows);

// Norm and element-wise ops (rmsnorm_avx2.cc, softmax_avx2.cc, elementwise_avx2.cc). RmsNorm: x*x
// summed in 8 lanes (FMA), folded as Fold; out = weight * (inv * x). Softmax: max, exp (avx2::Exp,
// ~2 ulp) summed in 8 lanes and folded, then x / sum. SwiGlu: g / (1 + Exp(-g)) * u. Add / AddBias:
// exact, as the reference.
void RmsNormAvx2(const float* x, const float* weight, float* out, int dim, float eps,
                 RowRange tokens);
void SoftmaxAvx2(float* x, int row_len, RowRange rows);
void SwiGluAvx2(float* gate, const float* up, int hidden, RowRange tokens);
// gpt-oss's clamped SwiGLU (SwiGluOaiRef's order, Exp for std::exp): x = min(g, limit),
// y = clamp(u, -limit, limit), x / (1 + Exp(-(alpha x))) * (y + 1).
void SwiGluOaiAvx2(float* gate, const float* up, int hidden, float alpha, float limit,
                   RowRange tokens);
// GeGLU (gelu_avx2.cc): bitwise GeGluRef (the half-rounded gate's table entry, gathered).
void GeGluAvx2(float* gate, const float* up, int hidden, RowRange tokens);
void AddAvx2(float* x, const float* delta, int dim, RowRange tokens);
void AddBiasAvx2(float* x, const float* bias, int dim, RowRange tokens);

// RoPE (rope_avx2.cc): bitwise the reference (same angles, same products, no FMA).
void RopeAvx2(float* x, const int32_t* positions, int n_heads, int head_dim, const RopeFreqs& freqs,
              RopeLayout layout, RowRange rows);

// Attention (attention_avx2.cc), per (token, head) row: scores q.k over head_dim in 8 lanes (FMA)
// folded as Fold, divided by sqrt(head_dim); softmax as SoftmaxAvx2; out[i] = sum over positions
// in order of p(pos) * v[pos, i] (FMA). head_dim > 256: AttentionRef.
void AttentionAvx2(const AttentionArgs& args, RowRange rows);
// K/V rows into a kF16 cache (attention_avx2.cc): vcvtps2ph, bitwise F32ToF16Ref.
void F32ToF16Avx2(const float* x, uint16_t* out, int64_t n);
// K/V rows into a kQ8 cache (attention_avx2.cc): bitwise F32ToQ8Ref. A kQ8 cache's scores and
// value sums take AttentionRef's operations (integer dots; the same fma sequence per value).
void F32ToQ8Avx2(const float* x, int8_t* qs, float* d, int64_t n);

}  // namespace smallmind::kernels::avx2
