#include "kernels/dispatch.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "kernels/amx/kernels_amx.h"
#include "kernels/avx2/kernels_avx2.h"
#include "kernels/avx512/kernels_avx512.h"
#include "kernels/avx_vnni/kernels_avx_vnni.h"

namespace smallmind::kernels {
namespace {

// Linux hands out the 8 KiB AMX tile state only to processes that ask (kernel 5.16+); the answer
// holds for every thread of the process. Asked once.
bool AmxPermitted() {
  static const bool permitted = [] {
    constexpr long kArchReqXcompPerm = 0x1023;
    constexpr long kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return permitted;
}

}  // namespace

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kBest: return "best";
    case Isa::kRef: return "ref";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
    case Isa::kAvxVnni: return "avxvnni";
    case Isa::kAmx: return "amx";
  }
  return "?";
}

std::string IsaNames() {
  std::string names;
  for (Isa isa : kAllIsas) names += std::string(names.empty() ? "" : ", ") + IsaName(isa);
  return names;
}

std::optional<Isa> IsaFromName(std::string_view name) {
  for (Isa isa : kAllIsas) {
    if (name == IsaName(isa)) return isa;
  }
  return std::nullopt;
}

bool CpuSupports(Isa isa) {
  switch (isa) {
    case Isa::kBest:
    case Isa::kRef: return true;
    case Isa::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("f16c");
    case Isa::kAvx512:
      // libgcc also checks that the OS saves the AVX-512 state (XCR0) before it reports these.
      return CpuSupports(Isa::kAvx2) && __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vnni");
    case Isa::kAvxVnni: return CpuSupports(Isa::kAvx2) && __builtin_cpu_supports("avxvnni");
    case Isa::kAmx:
      return CpuSupports(Isa::kAvx512) && __builtin_cpu_supports("amx-tile") &&
             __builtin_cpu_supports("amx-int8") && AmxPermitted();
  }
  return false;
}

// kAmx is chosen only by name: on the one AMX machine measured (session 19) its Q8_0 matmul was
// 10-15% faster than the AVX-512 VNNI one at 16 and 128 tokens but 5-11% slower at 8, and
// batched decode (8-16 streams) did not get faster. That was the 256-bit VNNI form; the 512-bit
// one that replaced it in the avx512 set (kernels/avx512/x16_zmm.h, session 20: 1.7-1.8x the
// 256-bit one at 8-128 tokens on Zen 5) has not been timed beside AMX yet.
Isa BestIsa() {
  if (CpuSupports(Isa::kAvx512)) return Isa::kAvx512;
  if (CpuSupports(Isa::kAvxVnni)) return Isa::kAvxVnni;
  return CpuSupports(Isa::kAvx2) ? Isa::kAvx2 : Isa::kRef;
}

KernelTable SelectKernels(Isa isa, ExecMode mode) {
  if (isa == Isa::kBest) isa = BestIsa();
  if (!CpuSupports(isa)) {
    // Kernels cannot depend on the project's check.h (STYLE §23): report and abort directly.
    std::fprintf(stderr, "kernels: this CPU does not support %s\n", IsaName(isa));
    std::abort();
  }
  switch (isa) {
    case Isa::kAvx2: return avx2::Avx2KernelTable(mode);
    case Isa::kAvx512: return avx512::Avx512KernelTable(mode);
    case Isa::kAvxVnni: return avx_vnni::AvxVnniKernelTable(mode);
    case Isa::kAmx: return amx::AmxKernelTable(mode);
    default: return RefKernelTable();
  }
}

}  // namespace smallmind::kernels
