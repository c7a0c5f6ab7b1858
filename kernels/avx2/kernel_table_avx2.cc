// Avx2KernelTable(): the AVX2 kernels for one ExecMode (the embedding row lookup stays the
// reference one: it runs once per token, off the hot loops).
//
// Q8_0, Q4_0, Q4_K, Q5_K and Q6_K matrices run the packed integer kernels over Q8 activations on
// both paths (the K-quants over kQ8K rows, the others over kQ8: llama.cpp's pairing, kernels.h):
// each output element is one lane reducing its row's blocks left to right, and activations are
// quantized per token row, so the result does not depend on the batch, the row split or the thread
// count, which is all the deterministic path asks (DESIGN.md section 4). Both paths then read one
// packed copy of those matrices. The float types keep float activations.
#include "kernels/avx2/kernels_avx2.h"
#include "kernels/ref/quantize_ref.h"

namespace smallmind::kernels::avx2 {

KernelTable Avx2KernelTable([[maybe_unused]] ExecMode mode) {
  KernelTable t = WithPackedMatmuls(
      RefKernelTable(), &MatmulQ8_0x8Q8Avx2, &MatmulQ4_0x8Q8Avx2,
      {&MatmulQ4_Kx8Q8Avx2, &MatmulQ5_Kx8Q8Avx2, &MatmulQ6_Kx8Q8Avx2, &MatmulIQ4_XSx8Q8Avx2});
  t.matmul[WeightSlot(DType::kF32)] = MatmulOp{&MatmulF32Avx2, MatmulInput::kF32};
  t.matmul[WeightSlot(DType::kF16)] = MatmulOp{&MatmulF16Avx2, MatmulInput::kF32};
  t.matmul[WeightSlot(DType::kBF16)] = MatmulOp{&MatmulBf16Avx2, MatmulInput::kF32};
  t.quantize_q8 = &QuantizeQ8Avx2;
  t.quantize_q8_octets = &QuantizeQ8OctetsAvx2;
  t.quantize_q8_1 = &QuantizeQ8_1Avx2;
  // The scalar q8_K quantizer: a scan for the signed max over 256 then one multiply and rounding
  // per element, a few us for a token of a 2048-wide model against its matmul's hundreds.
  t.quantize_q8_k = &QuantizeQ8KActRef;
  t.rmsnorm = &RmsNormAvx2;
  t.rope = &RopeAvx2;
  t.softmax = &SoftmaxAvx2;
  t.swiglu = &SwiGluAvx2;
  t.add = &AddAvx2;
  t.add_bias = &AddBiasAvx2;
  t.attention = &AttentionAvx2;
  t.f32_to_f16 = &F32ToF16Avx2;
  t.f32_to_q8 = &F32ToQ8Avx2;
  return t;
}

KernelTable WithPackedMatmuls(KernelTable t, MatmulFn q8_0, MatmulFn q4_0, const KQuantFns& k) {
  t.matmul[WeightSlot(DType::kQ8_0)] =
      MatmulOp{q8_0, MatmulInput::kQ8, &PackQ8_0x8, &PackedQ8_0x8Bytes};
  t.matmul[WeightSlot(DType::kQ4_0)] = Q4_0x8Op(q4_0, MatmulInput::kQ8);
  t.matmul[WeightSlot(DType::kQ4_K)] =
      MatmulOp{k.q4_k, MatmulInput::kQ8K, &PackQ4_Kx8, &PackedQ4_Kx8Bytes};
  t.matmul[WeightSlot(DType::kQ5_K)] =
      MatmulOp{k.q5_k, MatmulInput::kQ8K, &PackQ5_Kx8, &PackedQ5_Kx8Bytes};
  t.matmul[WeightSlot(DType::kQ6_K)] =
      MatmulOp{k.q6_k, MatmulInput::kQ8K, &PackQ6_Kx8, &PackedQ6_Kx8Bytes};
  t.matmul[WeightSlot(DType::kIQ4_XS)] =
      MatmulOp{k.iq4_xs, MatmulInput::kQ8K, &PackIQ4_XSx8, &PackedIQ4_XSx8Bytes};
  return t;
}

KernelTable WithVnniPackedMatmuls(KernelTable t, MatmulOp q8_0, MatmulOp q4_0, const KQuantFns& k) {
  t = WithPackedMatmuls(t, q8_0.fn, q4_0.fn, k);
  t.matmul[WeightSlot(DType::kQ8_0)] = q8_0;
  t.matmul[WeightSlot(DType::kQ4_0)] = q4_0;
  return t;
}

MatmulOp Q8_0x8uOp(MatmulFn fn) {
  return MatmulOp{fn, MatmulInput::kQ8Octets, &PackQ8_0x8u, &PackedQ8_0x8uBytes};
}
MatmulOp Q8_0x16uOp(MatmulFn fn, MatmulInput input) {
  return MatmulOp{fn, input, &PackQ8_0x16u, &PackedQ8_0x16uBytes};
}
MatmulOp Q4_0x8Op(MatmulFn fn, MatmulInput input) {
  return MatmulOp{fn, input, &PackQ4_0x8, &PackedQ4_0x8Bytes};
}
MatmulOp Q4_0x16Op(MatmulFn fn, MatmulInput input) {
  return MatmulOp{fn, input, &PackQ4_0x16, &PackedQ4_0x16Bytes};
}

}  // namespace smallmind::kernels::avx2
