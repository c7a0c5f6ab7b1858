// Avx512KernelTable(): the AVX2 table with the VNNI Q8_0 / Q4_0 matmuls. They read the AVX2
// kernels' packed layouts (same pack functions and sizes) and give their bits, so the
// deterministic path's results do not change with the table (avx2_kernel_table.cc says why the
// packed integer kernels are deterministic).
#include "kernels/avx2/avx2_kernels.h"
#include "kernels/avx512/avx512_kernels.h"

namespace smallmind::kernels::avx512 {

KernelTable Avx512KernelTable(ExecMode mode) {
  KernelTable t = avx2::Avx2KernelTable(mode);
  t.matmul[WeightSlot(DType::kQ8_0)] =
      MatmulOp{&MatmulQ8_0x8Q8Vnni, MatmulInput::kQ8, &avx2::PackQ8_0x8, &avx2::PackedQ8_0x8Bytes};
  t.matmul[WeightSlot(DType::kQ4_0)] =
      MatmulOp{&MatmulQ4_0x8Q8Vnni, MatmulInput::kQ8, &avx2::PackQ4_0x8, &avx2::PackedQ4_0x8Bytes};
  return t;
}

}  // namespace smallmind::kernels::avx512
