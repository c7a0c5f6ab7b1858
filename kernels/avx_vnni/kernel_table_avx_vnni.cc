// AvxVnniKernelTable(): the AVX2 table with the AVX-VNNI Q8_0 / Q4_0 / K-quant matmuls, which
// read the AVX2 packed layouts (Q8_0 offset to unsigned quants: Q8_0x8u) and give the AVX2
// kernels' bits.
#include "kernels/avx2/kernels_avx2.h"
#include "kernels/avx_vnni/kernels_avx_vnni.h"

namespace smallmind::kernels::avx_vnni {

KernelTable AvxVnniKernelTable(ExecMode mode) {
  return avx2::WithVnniPackedMatmuls(
      avx2::Avx2KernelTable(mode), avx2::Q8_0x8uOp(&MatmulQ8_0x8Q8AvxVnni),
      avx2::Q4_0x8Op(&MatmulQ4_0x8Q8AvxVnni, MatmulInput::kQ8Octets),
      {&MatmulQ4_Kx8Q8AvxVnni, &MatmulQ5_Kx8Q8AvxVnni, &MatmulQ6_Kx8Q8AvxVnni,
       &MatmulIQ4_XSx8Q8AvxVnni, &MatmulQ2_Kx8Q8AvxVnni});
}

}  // namespace smallmind::kernels::avx_vnni
