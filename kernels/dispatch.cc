#include "kernels/dispatch.h"

#include <cstdio>
#include <cstdlib>

#include "kernels/avx2/avx2_kernels.h"

namespace smallmind::kernels {

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kBest: return "best";
    case Isa::kRef: return "ref";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
  }
  return "?";
}

bool CpuSupports(Isa isa) {
  switch (isa) {
    case Isa::kBest:
    case Isa::kRef: return true;
    case Isa::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("f16c");
    case Isa::kAvx512:
      return CpuSupports(Isa::kAvx2) && __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  }
  return false;
}

// AVX-512 kernels are not written yet: an AVX-512 CPU runs the AVX2 ones.
Isa BestIsa() { return CpuSupports(Isa::kAvx2) ? Isa::kAvx2 : Isa::kRef; }

KernelTable SelectKernels(Isa isa, ExecMode mode) {
  if (isa == Isa::kBest) isa = BestIsa();
  if (!CpuSupports(isa)) {
    // Kernels cannot depend on the project's check.h (STYLE §23): report and abort directly.
    std::fprintf(stderr, "kernels: this CPU does not support %s\n", IsaName(isa));
    std::abort();
  }
  switch (isa) {
    case Isa::kAvx2: return avx2::Avx2KernelTable(mode);
    case Isa::kAvx512:  // no AVX-512 kernels yet; the AVX2 ones run on any AVX-512 CPU
      return avx2::Avx2KernelTable(mode);
    default: return RefKernelTable();
  }
}

}  // namespace smallmind::kernels
