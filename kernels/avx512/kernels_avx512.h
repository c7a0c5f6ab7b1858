// The AVX-512 (F/BW/DQ/VL + VNNI) kernels and their KernelTable. Chosen by kernels/dispatch.cc
// when the CPU has all of those; signatures as in kernels/kernels.h; thread-safe on disjoint
// output rows. Only the kernels/avx512/*.cc files are built with AVX-512 enabled, so callers reach
// these through the table.
#pragma once

#include "kernels/exec_mode.h"
#include "kernels/kernels.h"

namespace smallmind::kernels::avx512 {

// The AVX2 table with the Q8_0, Q4_0 and K-quant matmuls replaced by the VNNI ones below.
// Every entry gives the AVX2 kernel's bits (the VNNI matmuls compute the same exact integers), so
// a result does not depend on which of the two tables ran it.
KernelTable Avx512KernelTable(ExecMode mode);

// Matmuls over Q8 activations (matmul_avx512.cc) on the AVX2 kernels' packed layouts
// (avx2::PackQ4_Kx8, PackQ5_Kx8, PackQ6_Kx8), EVEX vpdpbusd integer cores on 256-bit registers:
// bitwise avx2::MatmulQ4_Kx8Q8Avx2, MatmulQ5_Kx8Q8Avx2 and MatmulQ6_Kx8Q8Avx2.
void MatmulQ4_Kx8Q8Vnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows);
void MatmulQ5_Kx8Q8Vnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows);
void MatmulIQ4_XSx8Q8Vnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                          int out_dim, RowRange rows);
void MatmulQ6_Kx8Q8Vnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows);
// Q2_K on avx2::PackQ2_Kx8's layout: bitwise avx2::MatmulQ2_Kx8Q8Avx2.
void MatmulQ2_Kx8Q8Vnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows);

// The table's Q8_0 and Q4_0 matmuls (matmul_x16_avx512.cc, x16_zmm.h): packed 16 rows a group
// (avx2::PackQ8_0x16u, PackQ4_0x16), 512-bit vpdpbusd; bitwise avx2::MatmulQ8_0x8Q8Avx2 and
// MatmulQ4_0x8Q8Avx2. Input MatmulInput::kQ8Octets: the Q8 rows of more than one token as octets
// (kernels/q8_act.h).
void MatmulQ8_0x16Q8Avx512(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                           int out_dim, RowRange rows);
// The same over Q8 rows (MatmulInput::kQ8) for any n_tokens: the AMX kernel's 1-3 tokens.
void MatmulQ8_0x16Q8RowsAvx512(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                               int out_dim, RowRange rows);
void MatmulQ4_0x16Q8Avx512(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                           int out_dim, RowRange rows);
// IQ4_NL and MXFP4 on their codes, 16 rows a group (avx2::PackIQ4_NLx16, PackMXFP4x16; input
// kQ8Octets): bitwise avx2::MatmulIQ4_NLx8Q8Avx2 / MatmulMXFP4x8Q8Avx2.
void MatmulIQ4_NLx16Q8Avx512(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                             int out_dim, RowRange rows);
void MatmulMXFP4x16Q8Avx512(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                            int out_dim, RowRange rows);

// Q8 activation octets (quantize_avx512.cc): bitwise avx2::QuantizeQ8OctetsAvx2, a block of
// all 8 tokens of an octet at once.
void QuantizeQ8OctetsAvx512(const float* x, void* octets, int in_dim, int n_tokens, int first,
                            int last);

// Softmax (softmax_avx512.cc): bitwise avx2::SoftmaxAvx2, its exps 16 lanes at a time and its
// tails by AVX-512 masked moves.
void SoftmaxAvx512(float* x, int row_len, RowRange rows);

// SwiGLU (elementwise_avx512.cc): bitwise avx2::SwiGluAvx2, 16 lanes at a time.
void SwiGluAvx512(float* gate, const float* up, int hidden, RowRange tokens);
// gpt-oss's clamped SwiGLU: bitwise avx2::SwiGluOaiAvx2, 16 lanes at a time.
void SwiGluOaiAvx512(float* gate, const float* up, int hidden, float alpha, float limit,
                     RowRange tokens);
// GeGLU (gelu_avx512.cc): bitwise GeGluRef, 16 table entries gathered at a time.
void GeGluAvx512(float* gate, const float* up, int hidden, RowRange tokens);

// Attention (attention_avx512.cc): bitwise avx2::AttentionAvx2 for every row. Over a float or half
// cache with head_dim % 8 == 0, the rows of a tile that read the same KV head (a prefill chunk's
// tokens, a GQA group's heads) go two to a 512-bit register, one per 256-bit half, so each cache
// element is converted once for up to four rows; a kQ8 cache runs AttentionQ8Avx512; other head
// sizes run AttentionAvx2.
void AttentionAvx512(const AttentionArgs& args, RowRange rows);
// Its kQ8 part (attention_q8_avx512.cc): the same packs on K quants made unsigned once a chunk
// (vpdpbusd against the query's quants) and V quants converted to floats once a chunk; tiles whose
// rows are each alone on their KV head take the AVX2 kQ8 walk.
void AttentionQ8Avx512(const AttentionArgs& args, RowRange rows);

}  // namespace smallmind::kernels::avx512
