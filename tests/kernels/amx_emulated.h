// A KernelTable of the AMX Q8_0 matmul (kernels/amx/amx_q8_0.h) on scalar stand-ins for the tile
// instructions (and for 1-3 tokens on zmm_emulated.h's 512-bit kernel, as the real one runs the
// avx512 set's), built with AVX2 alone: on a CPU without AMX, vnni_matmul_test.cc
// checks the kernel's own logic (the tile shapes, the activation rows read in place, the packed
// blocks as B tiles, the correction by the quant sums, the token tiles and chunks) against the
// AVX2 kernels bit for bit; the real instructions are checked where the CPU has them. Call only
// where CpuSupports(Isa::kAvx2).
#pragma once

#include "kernels/exec_mode.h"
#include "kernels/kernels.h"

namespace smallmind::kernels::testing {

KernelTable EmulatedAmxKernelTable(ExecMode mode);

}  // namespace smallmind::kernels::testing
