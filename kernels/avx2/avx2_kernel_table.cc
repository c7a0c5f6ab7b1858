// Avx2KernelTable(): the AVX2 kernels for one ExecMode (the embedding row lookup stays the
// reference one: it runs once per token, off the hot loops).
#include "kernels/avx2/avx2_kernels.h"

namespace smallmind::kernels::avx2 {

KernelTable Avx2KernelTable(ExecMode mode) {
  KernelTable t = RefKernelTable();
  const MatmulFn deterministic[kNumWeightTypes] = {
      &MatmulF32Avx2,  &MatmulF16Avx2,  &MatmulBf16Avx2, &MatmulQ8_0Avx2,
      &MatmulQ4_0Avx2, &MatmulQ4_KAvx2, &MatmulQ6_KAvx2};
  for (int i = 0; i < kNumWeightTypes; i++)
    t.matmul[i] = MatmulOp{deterministic[i], MatmulInput::kF32};
  if (mode == ExecMode::kParallel) {
    t.matmul[WeightSlot(DType::kQ8_0)] =
        MatmulOp{&MatmulQ8_0x8Q8Avx2, MatmulInput::kQ8, &PackQ8_0x8, &PackedQ8_0x8Bytes};
    t.matmul[WeightSlot(DType::kQ4_0)] =
        MatmulOp{&MatmulQ4_0x8Q8Avx2, MatmulInput::kQ8, &PackQ4_0x8, &PackedQ4_0x8Bytes};
    t.quantize_q8 = &QuantizeQ8Avx2;
  }
  t.rmsnorm = &RmsNormAvx2;
  t.rope = &RopeAvx2;
  t.softmax = &SoftmaxAvx2;
  t.swiglu = &SwiGluAvx2;
  t.add = &AddAvx2;
  t.add_bias = &AddBiasAvx2;
  t.attention = &AttentionAvx2;
  return t;
}

}  // namespace smallmind::kernels::avx2
