// The AVX-VNNI kernels (AVX2 + the VEX vpdpbusd: Alder Lake and later Intel cores, Sierra Forest
// and other E-core Xeons; no AVX-512 needed) and their KernelTable. Chosen by
// kernels/dispatch.cc on a CPU with AVX-VNNI but not the AVX-512 set; signatures as in
// kernels/kernels.h; thread-safe on disjoint output rows. Only the kernels/avx_vnni/*.cc files are
// built with AVX-VNNI enabled, so callers reach these through the table.
#pragma once

#include "kernels/exec_mode.h"
#include "kernels/kernels.h"

namespace smallmind::kernels::avx_vnni {

// The AVX2 table with the Q8_0, Q4_0 and K-quant matmuls replaced by the ones below, which
// give the AVX2 kernels' bits.
KernelTable AvxVnniKernelTable(ExecMode mode);

// Matmuls over Q8 activations (matmul_avx_vnni.cc) on the AVX2 kernels' packed layouts (Q8_0 as
// Q8_0x8u), VEX
// vpdpbusd integer cores (kernels/x86/vnni_cores.h): bitwise avx2::MatmulQ8_0x8Q8Avx2,
// MatmulQ4_0x8Q8Avx2, MatmulQ4_Kx8Q8Avx2, MatmulQ5_Kx8Q8Avx2 and MatmulQ6_Kx8Q8Avx2.
void MatmulQ8_0x8Q8AvxVnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                           int out_dim, RowRange rows);
void MatmulQ4_0x8Q8AvxVnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                           int out_dim, RowRange rows);
void MatmulQ4_Kx8Q8AvxVnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                           int out_dim, RowRange rows);
void MatmulQ5_Kx8Q8AvxVnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                           int out_dim, RowRange rows);
void MatmulIQ4_XSx8Q8AvxVnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                             int out_dim, RowRange rows);
void MatmulQ6_Kx8Q8AvxVnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                           int out_dim, RowRange rows);
// Q2_K on avx2::PackQ2_Kx8's layout: bitwise avx2::MatmulQ2_Kx8Q8Avx2.
void MatmulQ2_Kx8Q8AvxVnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                           int out_dim, RowRange rows);

}  // namespace smallmind::kernels::avx_vnni
