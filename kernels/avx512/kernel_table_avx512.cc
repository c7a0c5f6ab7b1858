// Avx512KernelTable(): the AVX2 table with the VNNI Q8_0 / Q4_0 / IQ4_NL / MXFP4 / K-quant
// matmuls. Q8_0, Q4_0, IQ4_NL and MXFP4 run on 512-bit registers, packed 16 rows a group (Q8_0x16u
// with its quants offset to unsigned, the AMX kernel's layout; Q4_0x16; IQ4_NLx16 and MXFP4x16 on
// their 4-bit codes); the K-quants read the AVX2 kernels' packed layouts on 256-bit registers.
// Attention over float and half caches serves the rows of a tile that share a KV head two to a
// 512-bit register (AttentionAvx512); softmax and SwiGLU compute 16 exps at a time (SoftmaxAvx512,
// SwiGluAvx512), GeGLU gathers 16 table entries (GeGluAvx512); matmul inputs are quantized into
// octets a block of 8 tokens at once (QuantizeQ8OctetsAvx512). All give the AVX2 kernels' bits, so
// the deterministic path's results do not change with the table (kernel_table_avx2.cc says why the
// packed integer kernels are deterministic).
#include "kernels/avx2/kernels_avx2.h"
#include "kernels/avx512/kernels_avx512.h"

namespace smallmind::kernels::avx512 {

KernelTable Avx512KernelTable(ExecMode mode) {
  KernelTable t = avx2::WithVnniPackedMatmuls(
      avx2::Avx2KernelTable(mode), avx2::Q8_0x16uOp(&MatmulQ8_0x16Q8Avx512, MatmulInput::kQ8Octets),
      avx2::Q4_0x16Op(&MatmulQ4_0x16Q8Avx512, MatmulInput::kQ8Octets),
      {&MatmulQ4_Kx8Q8Vnni, &MatmulQ5_Kx8Q8Vnni, &MatmulQ6_Kx8Q8Vnni, &MatmulIQ4_XSx8Q8Vnni,
       &MatmulQ2_Kx8Q8Vnni});
  // IQ4_NL and MXFP4 on their codes (320 B per 16 rows x 32 instead of widened Q8_0x16u's 544).
  t.matmul[WeightSlot(DType::kIQ4_NL)] = MatmulOp{&MatmulIQ4_NLx16Q8Avx512, MatmulInput::kQ8Octets,
                                                  &avx2::PackIQ4_NLx16, &avx2::PackedLut4x16Bytes};
  t.matmul[WeightSlot(DType::kMXFP4)] = MatmulOp{&MatmulMXFP4x16Q8Avx512, MatmulInput::kQ8Octets,
                                                 &avx2::PackMXFP4x16, &avx2::PackedLut4x16Bytes};
  t.attention = &AttentionAvx512;
  t.softmax = &SoftmaxAvx512;
  t.swiglu = &SwiGluAvx512;
  t.swiglu_oai = &SwiGluOaiAvx512;
  t.geglu = &GeGluAvx512;
  t.quantize_q8_octets = &QuantizeQ8OctetsAvx512;
  return t;
}

}  // namespace smallmind::kernels::avx512
