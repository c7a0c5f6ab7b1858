// RefKernelTable(): the KernelTable of the scalar reference kernels.
#include "kernels/kernels.h"
#include "kernels/ref/attention_ref.h"
#include "kernels/ref/dequant_ref.h"
#include "kernels/ref/elementwise_ref.h"
#include "kernels/ref/gelu_ref.h"
#include "kernels/ref/layernorm_ref.h"
#include "kernels/ref/low_bit_ref.h"
#include "kernels/ref/matmul_ref.h"
#include "kernels/ref/rmsnorm_ref.h"
#include "kernels/ref/rope_ref.h"
#include "kernels/ref/softmax_ref.h"

namespace smallmind::kernels {
namespace {

// DequantRowFn adapters over the typed reference routines.
template <typename Block, void (*Dequant)(const Block*, float*, int64_t)>
void DequantRow(const void* row, float* out, int n) {
  Dequant(static_cast<const Block*>(row), out, n);
}

void DequantRowF32(const void* row, float* out, int n) { DequantizeRef(DType::kF32, row, out, n); }

}  // namespace

KernelTable RefKernelTable() {
  KernelTable t;
  const MatmulFn matmuls[kNumWeightTypes] = {
      &MatmulF32Ref,    &MatmulF16Ref,  &MatmulBf16Ref,   &MatmulQ8_0Ref,
      &MatmulQ4_0Ref,   &MatmulQ4_KRef, &MatmulQ6_KRef,   &MatmulQ5_KRef,
      &MatmulIQ4_XSRef, &MatmulQ5_0Ref, &MatmulIQ4_NLRef, &MatmulQ4_1Ref,
      &MatmulQ5_1Ref,   &MatmulQ2_KRef, &MatmulQ3_KRef,   &MatmulMXFP4Ref};
  const DequantRowFn rows[kNumWeightTypes] = {&DequantRowF32,
                                              &DequantRow<uint16_t, DequantizeF16Ref>,
                                              &DequantRow<uint16_t, DequantizeBf16Ref>,
                                              &DequantRow<BlockQ8_0, DequantizeQ8_0Ref>,
                                              &DequantRow<BlockQ4_0, DequantizeQ4_0Ref>,
                                              &DequantRow<BlockQ4_K, DequantizeQ4_KRef>,
                                              &DequantRow<BlockQ6_K, DequantizeQ6_KRef>,
                                              &DequantRow<BlockQ5_K, DequantizeQ5_KRef>,
                                              &DequantRow<BlockIQ4_XS, DequantizeIQ4_XSRef>,
                                              &DequantRow<BlockQ5_0, DequantizeQ5_0Ref>,
                                              &DequantRow<BlockIQ4_NL, DequantizeIQ4_NLRef>,
                                              &DequantRow<BlockQ4_1, DequantizeQ4_1Ref>,
                                              &DequantRow<BlockQ5_1, DequantizeQ5_1Ref>,
                                              &DequantRow<BlockQ2_K, DequantizeQ2_KRef>,
                                              &DequantRow<BlockQ3_K, DequantizeQ3_KRef>,
                                              &DequantRow<BlockMXFP4, DequantizeMXFP4Ref>};
  for (int i = 0; i < kNumWeightTypes; i++) {
    t.matmul[i] = MatmulOp{matmuls[i], MatmulInput::kF32};
    t.dequant_row[i] = rows[i];
  }
  t.rmsnorm = &RmsNormRef;
  t.rope = &RopeRef;
  t.softmax = &SoftmaxRef;
  t.swiglu = &SwiGluRef;
  t.swiglu_oai = &SwiGluOaiRef;
  t.geglu = &GeGluRef;
  // Encoders only (BERT): a LayerNorm and a GELU per layer, element work beside the matmuls.
  t.gelu = &GeluRef;
  t.layernorm = &LayerNormRef;
  t.scale = &ScaleRef;
  t.soft_cap = &SoftCapRowsRef;
  t.add = &AddRef;
  t.add_bias = &AddBiasRef;
  t.attention = &AttentionRef;
  t.f32_to_f16 = &F32ToF16Ref;
  t.f32_to_q8 = &F32ToQ8Ref;
  return t;
}

}  // namespace smallmind::kernels
