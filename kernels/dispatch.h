// Kernel dispatch: which instruction sets this CPU has (CPUID, read when asked) and the KernelTable
// of the best (or a chosen) one for an ExecMode. Called once per engine at construction and by
// tests/benchmarks; pure functions, thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kernels/exec_mode.h"
#include "kernels/kernels.h"

namespace smallmind::kernels {

enum class Isa {
  kBest,     // the best this CPU runs
  kRef,      // the scalar reference kernels
  kAvx2,     // AVX2 + FMA + F16C
  kAvx512,   // AVX-512 F/BW/DQ/VL + VNNI (Ice Lake, Sapphire Rapids, Zen 4 and later)
  kAvxVnni,  // AVX2 + AVX-VNNI, no AVX-512 (Alder Lake and later cores, E-core Xeons)
  kAmx,      // kAvx512 + AMX-TILE/AMX-INT8 (Sapphire Rapids and later Xeons); only by name
};

// Every Isa, in the order flags and messages list them.
inline constexpr Isa kAllIsas[] = {Isa::kBest,    Isa::kAmx,  Isa::kAvx512,
                                   Isa::kAvxVnni, Isa::kAvx2, Isa::kRef};

const char* IsaName(Isa isa);
// "best, amx, avx512, avxvnni, avx2, ref": the names flags take.
std::string IsaNames();
// The Isa IsaName gives `name` (exact, lower case), or nullopt.
std::optional<Isa> IsaFromName(std::string_view name);

// Whether this CPU (and OS) runs code built for `isa`; kBest and kRef: always. For kAmx the first
// call also asks Linux for this process's permission to use the tile data (arch_prctl
// ARCH_REQ_XCOMP_PERM): without it AMX is not supported.
bool CpuSupports(Isa isa);

// The best ISA with kernels here that this CPU supports (never kAmx: opt in by name, see
// dispatch.cc).
Isa BestIsa();

// The table for `isa` (kBest: BestIsa()) and `mode`. Each entry falls back to the reference kernel
// where that ISA has no specialised one. Aborts if the CPU does not support `isa`.
KernelTable SelectKernels(Isa isa, ExecMode mode);

}  // namespace smallmind::kernels
