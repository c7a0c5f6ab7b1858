#include "kernels/dtype.h"

namespace smallmind::kernels {

const DTypeTraits* GetDTypeTraits(uint32_t ggml_type) {
  // Block layouts from the GGUF/ggml definitions: Q8_0 = f16 scale + 32 int8; Q4_0 = f16 scale +
  // 16 bytes of nibbles; Q4_K = 2 f16 + 12 bytes of scales + 128 bytes of nibbles per 256;
  // Q5_K = Q4_K plus 32 bytes of high bits per 256; Q6_K = 128 + 64 + 16 bytes + f16 per 256;
  // Q5_0 = f16 scale + 4 bytes of fifth bits + 16 bytes of nibbles; IQ4_NL = f16 scale + 16 bytes
  // of level indices;
  // IQ4_XS = f16 + 2 + 4 bytes of 6-bit scales + 128 bytes of level indices per 256; Q4_1 / Q5_1
  // = Q4_0 / Q5_0 plus an f16 min; Q2_K = 16 bytes of 4-bit scales and mins + 64 bytes of 2-bit
  // quants + 2 f16 per 256; Q3_K = 32 bytes of high bits + 64 of 2-bit quants + 12 of 6-bit
  // scales + f16 per 256 (kernels/low_bit_blocks.h); MXFP4 = one E8M0 exponent byte + 16 bytes
  // of E2M1 codes per 32 (kernels/quant_blocks.h)
  static constexpr DTypeTraits kF32{"F32", 1, 4};
  static constexpr DTypeTraits kF16{"F16", 1, 2};
  static constexpr DTypeTraits kBF16{"BF16", 1, 2};
  static constexpr DTypeTraits kQ8_0{"Q8_0", 32, 34};
  static constexpr DTypeTraits kQ4_0{"Q4_0", 32, 18};
  static constexpr DTypeTraits kQ5_0{"Q5_0", 32, 22};
  static constexpr DTypeTraits kIQ4_NL{"IQ4_NL", 32, 18};
  static constexpr DTypeTraits kQ4_K{"Q4_K", 256, 144};
  static constexpr DTypeTraits kQ5_K{"Q5_K", 256, 176};
  static constexpr DTypeTraits kQ6_K{"Q6_K", 256, 210};
  static constexpr DTypeTraits kIQ4_XS{"IQ4_XS", 256, 136};
  static constexpr DTypeTraits kQ4_1{"Q4_1", 32, 20};
  static constexpr DTypeTraits kQ5_1{"Q5_1", 32, 24};
  static constexpr DTypeTraits kQ2_K{"Q2_K", 256, 84};
  static constexpr DTypeTraits kQ3_K{"Q3_K", 256, 110};
  static constexpr DTypeTraits kMXFP4{"MXFP4", 32, 17};
  switch (static_cast<DType>(ggml_type)) {
    case DType::kF32: return &kF32;
    case DType::kF16: return &kF16;
    case DType::kBF16: return &kBF16;
    case DType::kQ8_0: return &kQ8_0;
    case DType::kQ4_0: return &kQ4_0;
    case DType::kQ5_0: return &kQ5_0;
    case DType::kIQ4_NL: return &kIQ4_NL;
    case DType::kQ4_K: return &kQ4_K;
    case DType::kQ5_K: return &kQ5_K;
    case DType::kQ6_K: return &kQ6_K;
    case DType::kIQ4_XS: return &kIQ4_XS;
    case DType::kQ4_1: return &kQ4_1;
    case DType::kQ5_1: return &kQ5_1;
    case DType::kQ2_K: return &kQ2_K;
    case DType::kQ3_K: return &kQ3_K;
    case DType::kMXFP4: return &kMXFP4;
  }
  return nullptr;
}

}  // namespace smallmind::kernels
