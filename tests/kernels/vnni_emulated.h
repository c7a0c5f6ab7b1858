// A KernelTable of the VNNI matmuls' integer cores (kernels/x86/vnni_cores.h) on a scalar
// stand-in for vpdpbusd, built with AVX2 alone: on a CPU without VNNI, vnni_matmul_test.cc checks
// the cores' own logic (the Q8_0 quants offset to unsigned, the sums they start from) against the
// AVX2 kernels bit for bit; the real instructions are checked where the CPU has them. Call only
// where CpuSupports(Isa::kAvx2).
#pragma once

#include "kernels/exec_mode.h"
#include "kernels/kernels.h"

namespace smallmind::kernels::testing {

KernelTable EmulatedVnniKernelTable(ExecMode mode);

}  // namespace smallmind::kernels::testing
