// The AMX (AMX-TILE + AMX-INT8, with AVX-512 VNNI) kernels and their KernelTable. Chosen by
// kernels/dispatch.cc when the CPU has them and the OS lets this process use the tile state;
// signatures as in kernels/kernels.h; thread-safe on disjoint output rows. Only the
// kernels/amx/*.cc files are built with AMX enabled, so callers reach these through the table.
#pragma once

#include "kernels/exec_mode.h"
#include "kernels/kernels.h"

namespace smallmind::kernels::amx {

// The AVX-512 table with the Q8_0 matmul replaced by the AMX one below (Q8_0 packed 16 rows a
// group, avx2::PackQ8_0x16u; same bits as the AVX2 and VNNI kernels, so a result does not depend
// on which table ran it).
KernelTable AmxKernelTable(ExecMode mode);

// Q8_0 weights (avx2::PackQ8_0x16u) over Q8 activations (matmul_amx.cc, kernels/amx/amx_q8_0.h):
// 4 or more tokens by TDPBSUD tiles of up to 16 tokens, 1-3 by avx512::MatmulQ8_0x16Q8Avx512;
// bitwise avx2::MatmulQ8_0x8Q8Avx2.
void MatmulQ8_0x16Q8Amx(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows);

}  // namespace smallmind::kernels::amx
