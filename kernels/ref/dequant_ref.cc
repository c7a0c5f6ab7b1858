// Block formats follow ggml's definitions (ggml/src/ggml-common.h for the structs,
// ggml/src/ggml-quants.c dequantize_row_* and quantize_row_*_ref for the arithmetic). The element
// order inside each block is spelled out next to each routine.
#include "kernels/ref/dequant_ref.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace smallmind::kernels {

void DequantizeF16Ref(const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = Fp16ToFp32(x[i]);
}

void DequantizeBf16Ref(const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = Bf16ToFp32(x[i]);
}

void DequantizeQ8_0Ref(const BlockQ8_0* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQk8_0; b++) {
    const float d = Fp16ToFp32(x[b].d);
    for (int j = 0; j < kQk8_0; j++) y[b * kQk8_0 + j] = static_cast<float>(x[b].qs[j]) * d;
  }
}

void DequantizeQ4_0Ref(const BlockQ4_0* x, float* y, int64_t n) {
  constexpr int kHalf = kQk4_0 / 2;
  for (int64_t b = 0; b < n / kQk4_0; b++) {
    const float d = Fp16ToFp32(x[b].d);
    float* out = y + b * kQk4_0;  // [32]: low nibbles give 0..15, high nibbles 16..31
    for (int j = 0; j < kHalf; j++) {
      out[j] = static_cast<float>((x[b].qs[j] & 0x0f) - 8) * d;
      out[j + kHalf] = static_cast<float>((x[b].qs[j] >> 4) - 8) * d;
    }
  }
}

namespace {

// The 6-bit scale and min of Q4_K sub-block j (0..7) from the 12 packed bytes q (ggml's
// get_scale_min_k4): sub-blocks 0..3 keep their scale in the low 6 bits of q[j] and their min in
// the low 6 bits of q[j + 4]; sub-blocks 4..7 take 4 low bits from q[j + 4] (scale: low nibble,
// min: high nibble) and 2 high bits from the top bits of q[j - 4] (scale) and q[j] (min).
void ScaleMinK4(int j, const uint8_t* q, uint8_t* scale, uint8_t* min) {
  if (j < 4) {
    *scale = q[j] & 63;
    *min = q[j + 4] & 63;
  } else {
    *scale = static_cast<uint8_t>((q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4));
    *min = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

}  // namespace

void DequantizeQ4_KRef(const BlockQ4_K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQkK; b++) {
    const float d = Fp16ToFp32(x[b].d);
    const float dmin = Fp16ToFp32(x[b].dmin);
    const uint8_t* q = x[b].qs;
    float* out = y + b * kQkK;  // [256]
    // Each group of 64 outputs reads 32 bytes: low nibbles = sub-block 2g, high = sub-block 2g + 1.
    for (int g = 0; g < kQkK / 64; g++) {
      uint8_t sc_lo, m_lo, sc_hi, m_hi;
      ScaleMinK4(2 * g, x[b].scales, &sc_lo, &m_lo);
      ScaleMinK4(2 * g + 1, x[b].scales, &sc_hi, &m_hi);
      const float d_lo = d * sc_lo, min_lo = dmin * m_lo;
      const float d_hi = d * sc_hi, min_hi = dmin * m_hi;
      for (int l = 0; l < 32; l++) {
        out[64 * g + l] = d_lo * static_cast<float>(q[32 * g + l] & 0x0f) - min_lo;
        out[64 * g + 32 + l] = d_hi * static_cast<float>(q[32 * g + l] >> 4) - min_hi;
      }
    }
  }
}

void DequantizeQ6_KRef(const BlockQ6_K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQkK; b++) {
    const float d = Fp16ToFp32(x[b].d);
    float* out = y + b * kQkK;  // [256] as two halves of 128
    // Half h (elements 128h .. 128h + 127) uses ql[64h .. 64h + 63], qh[32h .. 32h + 31] and
    // scales[8h .. 8h + 7]. For l < 32, qh[l] holds the 2 high bits of 4 elements:
    //   element l      : low nibble of ql[l],      qh bits 0-1
    //   element l + 32 : low nibble of ql[l + 32], qh bits 2-3
    //   element l + 64 : high nibble of ql[l],     qh bits 4-5
    //   element l + 96 : high nibble of ql[l + 32], qh bits 6-7
    // and element e of the half uses scale scales[8h + e / 16].
    for (int h = 0; h < 2; h++) {
      const uint8_t* ql = x[b].ql + 64 * h;
      const uint8_t* qh = x[b].qh + 32 * h;
      const int8_t* sc = x[b].scales + 8 * h;
      float* o = out + 128 * h;
      for (int l = 0; l < 32; l++) {
        const int q1 = ((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        const int s = l / 16;
        o[l] = d * static_cast<float>(sc[s + 0]) * static_cast<float>(q1);
        o[l + 32] = d * static_cast<float>(sc[s + 2]) * static_cast<float>(q2);
        o[l + 64] = d * static_cast<float>(sc[s + 4]) * static_cast<float>(q3);
        o[l + 96] = d * static_cast<float>(sc[s + 6]) * static_cast<float>(q4);
      }
    }
  }
}

bool DequantizeRef(DType type, const void* x, float* y, int64_t n) {
  switch (type) {
    case DType::kF32:
      std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float));
      return true;
    case DType::kF16:
      DequantizeF16Ref(static_cast<const uint16_t*>(x), y, n);
      return true;
    case DType::kBF16:
      DequantizeBf16Ref(static_cast<const uint16_t*>(x), y, n);
      return true;
    case DType::kQ8_0:
      DequantizeQ8_0Ref(static_cast<const BlockQ8_0*>(x), y, n);
      return true;
    case DType::kQ4_0:
      DequantizeQ4_0Ref(static_cast<const BlockQ4_0*>(x), y, n);
      return true;
    case DType::kQ4_K:
      DequantizeQ4_KRef(static_cast<const BlockQ4_K*>(x), y, n);
      return true;
    case DType::kQ6_K:
      DequantizeQ6_KRef(static_cast<const BlockQ6_K*>(x), y, n);
      return true;
  }
  return false;
}

void QuantizeQ8_0Ref(const float* x, BlockQ8_0* y, int64_t n) {
  for (int64_t b = 0; b < n / kQk8_0; b++) {
    const float* in = x + b * kQk8_0;  // [32]
    float amax = 0.0f;
    for (int j = 0; j < kQk8_0; j++) amax = std::fmax(amax, std::fabs(in[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = Fp32ToFp16(d);
    for (int j = 0; j < kQk8_0; j++) y[b].qs[j] = static_cast<int8_t>(std::round(in[j] * id));
  }
}

void QuantizeQ4_0Ref(const float* x, BlockQ4_0* y, int64_t n) {
  constexpr int kHalf = kQk4_0 / 2;
  for (int64_t b = 0; b < n / kQk4_0; b++) {
    const float* in = x + b * kQk4_0;  // [32]
    float amax = 0.0f;
    float max = 0.0f;  // the element of largest magnitude, first one on ties
    for (int j = 0; j < kQk4_0; j++) {
      if (amax < std::fabs(in[j])) {
        amax = std::fabs(in[j]);
        max = in[j];
      }
    }
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = Fp32ToFp16(d);
    for (int j = 0; j < kHalf; j++) {
      // (int8_t) truncates toward zero, as in ggml; the values are in [0.5, 16.5] here.
      const int lo = std::min(15, static_cast<int>(static_cast<int8_t>(in[j] * id + 8.5f)));
      const int hi = std::min(15, static_cast<int>(static_cast<int8_t>(in[j + kHalf] * id + 8.5f)));
      y[b].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

}  // namespace smallmind::kernels
