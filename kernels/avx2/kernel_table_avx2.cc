// Avx2KernelTable(): the AVX2 kernels for one ExecMode (the embedding row lookup stays the
// reference one: it runs once per token, off the hot loops).
//
// Q8_0, Q4_0, Q4_K, Q5_K, Q6_K, Q2_K, Q4_1, Q5_1, IQ4_NL and MXFP4 matrices (Q5_0 as widened Q8_0,
// Q3_K as widened Q6_K; the VNNI and AMX tables widen IQ4_NL and MXFP4 too) run the packed integer
// kernels over Q8 activations on both paths (the K-quants over kQ8K rows, Q4_1 / Q5_1 over kQ8_1,
// the others over kQ8:
// llama.cpp's pairing, kernels.h): each output element is one lane reducing its row's blocks left
// to right, and activations are quantized per token row, so the result does not depend on the
// batch, the row split or the thread count, which is all the deterministic path asks (DESIGN.md
// section 4). Both paths then read one packed copy of those matrices. The float types keep float
// activations.
#include "kernels/avx2/kernels_avx2.h"
#include "kernels/ref/quantize_ref.h"

namespace smallmind::kernels::avx2 {

KernelTable Avx2KernelTable([[maybe_unused]] ExecMode mode) {
  KernelTable t = WithPackedMatmuls(RefKernelTable(), &MatmulQ8_0x8Q8Avx2, &MatmulQ4_0x8Q8Avx2,
                                    {&MatmulQ4_Kx8Q8Avx2, &MatmulQ5_Kx8Q8Avx2, &MatmulQ6_Kx8Q8Avx2,
                                     &MatmulIQ4_XSx8Q8Avx2, &MatmulQ2_Kx8Q8Avx2});
  // IQ4_NL and MXFP4 on their codes: half the bytes a token reads of them widened to Q8_0.
  t.matmul[WeightSlot(DType::kIQ4_NL)] =
      MatmulOp{&MatmulIQ4_NLx8Q8Avx2, MatmulInput::kQ8, &PackIQ4_NLx8, &PackedLut4x8Bytes};
  t.matmul[WeightSlot(DType::kMXFP4)] =
      MatmulOp{&MatmulMXFP4x8Q8Avx2, MatmulInput::kQ8, &PackMXFP4x8, &PackedLut4x8Bytes};
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
  t.swiglu_oai = &SwiGluOaiAvx2;
  t.geglu = &GeGluAvx2;
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
  t.matmul[WeightSlot(DType::kQ3_K)] =
      MatmulOp{k.q6_k, MatmulInput::kQ8K, &PackQ3_KAsQ6_Kx8, &PackedQ6_Kx8Bytes};
  t.matmul[WeightSlot(DType::kQ2_K)] =
      MatmulOp{k.q2_k, MatmulInput::kQ8K, &PackQ2_Kx8, &PackedQ2_Kx8Bytes};
  // Q4_1 / Q5_1: the maddubs kernels in every table (kernels_avx2.h says why).
  t.matmul[WeightSlot(DType::kQ4_1)] =
      MatmulOp{&MatmulQ4_1x8Q8Avx2, MatmulInput::kQ8_1, &PackQ4_1x8, &PackedQ4_1x8Bytes};
  t.matmul[WeightSlot(DType::kQ5_1)] =
      MatmulOp{&MatmulQ8_1x8Q8Avx2, MatmulInput::kQ8_1, &PackQ5_1AsQ8_1x8, &PackedQ8_1x8Bytes};
  return WithWidenedQ8_0Matmuls(t);
}

KernelTable WithVnniPackedMatmuls(KernelTable t, MatmulOp q8_0, MatmulOp q4_0, const KQuantFns& k) {
  t = WithPackedMatmuls(t, q8_0.fn, q4_0.fn, k);
  t.matmul[WeightSlot(DType::kQ8_0)] = q8_0;
  t.matmul[WeightSlot(DType::kQ4_0)] = q4_0;
  return WithWidenedQ8_0Matmuls(t);
}

KernelTable WithWidenedQ8_0Matmuls(KernelTable t) {
  const MatmulOp q8_0 = t.matmul[WeightSlot(DType::kQ8_0)];
  for (DType source : {DType::kQ5_0, DType::kIQ4_NL, DType::kMXFP4}) {
    const PackFn pack = WidenedQ8_0Pack(q8_0.pack, source);
    if (pack != nullptr)
      t.matmul[WeightSlot(source)] = MatmulOp{q8_0.fn, q8_0.input, pack, q8_0.packed_bytes};
  }
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
