// AmxKernelTable(): the AVX-512 table with the AMX Q8_0 matmul (also Q5_0's, IQ4_NL's and MXFP4's,
// widened: the AMX tiles' prefill on them was not measured against the AVX-512 table's codes),
// on Q8_0 packed 16 rows a group (Q8_0x16u). It gives the VNNI and AVX2 kernels' bits (amx_q8_0.h
// says why), so the deterministic path's results do not change with the table.
#include "kernels/amx/kernels_amx.h"
#include "kernels/avx2/kernels_avx2.h"
#include "kernels/avx512/kernels_avx512.h"

namespace smallmind::kernels::amx {

KernelTable AmxKernelTable(ExecMode mode) {
  KernelTable t = avx512::Avx512KernelTable(mode);
  t.matmul[WeightSlot(DType::kQ8_0)] = avx2::Q8_0x16uOp(&MatmulQ8_0x16Q8Amx, MatmulInput::kQ8);
  return avx2::WithWidenedQ8_0Matmuls(t);  // Q5_0, IQ4_NL and MXFP4 on the AMX kernel too
}

}  // namespace smallmind::kernels::amx
