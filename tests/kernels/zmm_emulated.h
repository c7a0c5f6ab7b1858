// A KernelTable of the 16-lane Q8_0 and Q4_0 matmuls (kernels/avx512/x16_zmm.h) on a stand-in for
// the 512-bit registers (two 256-bit halves, a scalar vpdpbusd), built with AVX2 alone: on a CPU
// without AVX-512, vnni_matmul_test.cc checks the kernels' own logic (16-row groups, the
// quant-sum start, the nibbles, the float steps per lane, the tiles on the shared driver) against
// the AVX2 kernels bit for bit; the real instructions are checked where the CPU has them. Call only
// where CpuSupports(Isa::kAvx2).
#pragma once

#include "kernels/exec_mode.h"
#include "kernels/kernels.h"

namespace smallmind::kernels::testing {

KernelTable EmulatedZmmKernelTable(ExecMode mode);
// Its Q8_0 matmul over Q8 rows (the AMX stand-in's for 1-3 tokens, as the real AMX kernel runs
// avx512::MatmulQ8_0x16Q8RowsAvx512).
void EmulatedMatmulQ8_0x16(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                           int out_dim, RowRange rows);

}  // namespace smallmind::kernels::testing
