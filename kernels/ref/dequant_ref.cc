// Block formats follow ggml's definitions (ggml/src/ggml-common.h for the structs,
// ggml/src/ggml-quants.c dequantize_row_* and quantize_row_q8_0/q4_0_ref for the arithmetic). The
// element order inside each block is spelled out next to each routine. The K-quant quantizers at
// the end are smallmind's own: they write exactly what the dequantizers here read back.
#include "kernels/ref/dequant_ref.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/ref/low_bit_ref.h"
#include "kernels/ref/quant_fit.h"

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

uint32_t Q5_0HighBits(const BlockQ5_0& b) {
  uint32_t qh;
  std::memcpy(&qh, b.qh, sizeof(qh));
  return qh;
}

int Q5_0Quant(const BlockQ5_0& b, int j) {
  const uint32_t qh = Q5_0HighBits(b);
  const int nibble = j < 16 ? b.qs[j] & 0x0f : b.qs[j - 16] >> 4;
  return (nibble | static_cast<int>(((qh >> j) & 1u) << 4)) - 16;
}

void DequantizeQ5_0Ref(const BlockQ5_0* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQk4_0; b++) {
    const float d = Fp16ToFp32(x[b].d);
    float* out = y + b * kQk4_0;  // [32]
    for (int j = 0; j < kQk4_0; j++) out[j] = static_cast<float>(Q5_0Quant(x[b], j)) * d;
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

namespace {

// The fifth bit (0 or 16) of element l (0..31) of sub-block j: none for Q4_K, bit j of qh[l] for
// Q5_K.
int HighBit(const BlockQ4_K&, int, int) { return 0; }
int HighBit(const BlockQ5_K& blk, int j, int l) { return ((blk.qh[l] >> j) & 1) << 4; }

// Q4_K and Q5_K: each group of 64 outputs reads 32 bytes of qs: low nibbles = sub-block 2g,
// high = sub-block 2g + 1, each with its high bit (HighBit); x = d * sc * q - dmin * m.
template <typename Block>
void DequantizeScaleMinRef(const Block* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQkK; b++) {
    const float d = Fp16ToFp32(x[b].d);
    const float dmin = Fp16ToFp32(x[b].dmin);
    const uint8_t* q = x[b].qs;
    float* out = y + b * kQkK;  // [256]
    for (int g = 0; g < kQkK / 64; g++) {
      uint8_t sc_lo, m_lo, sc_hi, m_hi;
      ScaleMinK4(2 * g, x[b].scales, &sc_lo, &m_lo);
      ScaleMinK4(2 * g + 1, x[b].scales, &sc_hi, &m_hi);
      const float d_lo = d * sc_lo, min_lo = dmin * m_lo;
      const float d_hi = d * sc_hi, min_hi = dmin * m_hi;
      for (int l = 0; l < 32; l++) {
        const int lo = (q[32 * g + l] & 0x0f) | HighBit(x[b], 2 * g, l);
        const int hi = (q[32 * g + l] >> 4) | HighBit(x[b], 2 * g + 1, l);
        out[64 * g + l] = d_lo * static_cast<float>(lo) - min_lo;
        out[64 * g + 32 + l] = d_hi * static_cast<float>(hi) - min_hi;
      }
    }
  }
}

}  // namespace

void DequantizeQ4_KRef(const BlockQ4_K* x, float* y, int64_t n) { DequantizeScaleMinRef(x, y, n); }

void DequantizeQ5_KRef(const BlockQ5_K* x, float* y, int64_t n) { DequantizeScaleMinRef(x, y, n); }

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
    case DType::kF32: std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float)); return true;
    case DType::kF16: DequantizeF16Ref(static_cast<const uint16_t*>(x), y, n); return true;
    case DType::kBF16: DequantizeBf16Ref(static_cast<const uint16_t*>(x), y, n); return true;
    case DType::kQ8_0: DequantizeQ8_0Ref(static_cast<const BlockQ8_0*>(x), y, n); return true;
    case DType::kQ4_0: DequantizeQ4_0Ref(static_cast<const BlockQ4_0*>(x), y, n); return true;
    case DType::kQ5_0: DequantizeQ5_0Ref(static_cast<const BlockQ5_0*>(x), y, n); return true;
    case DType::kIQ4_NL: DequantizeIQ4_NLRef(static_cast<const BlockIQ4_NL*>(x), y, n); return true;
    case DType::kQ4_K: DequantizeQ4_KRef(static_cast<const BlockQ4_K*>(x), y, n); return true;
    case DType::kQ5_K: DequantizeQ5_KRef(static_cast<const BlockQ5_K*>(x), y, n); return true;
    case DType::kQ6_K: DequantizeQ6_KRef(static_cast<const BlockQ6_K*>(x), y, n); return true;
    case DType::kIQ4_XS: DequantizeIQ4_XSRef(static_cast<const BlockIQ4_XS*>(x), y, n); return true;
    case DType::kQ4_1: DequantizeQ4_1Ref(static_cast<const BlockQ4_1*>(x), y, n); return true;
    case DType::kQ5_1: DequantizeQ5_1Ref(static_cast<const BlockQ5_1*>(x), y, n); return true;
    case DType::kQ2_K: DequantizeQ2_KRef(static_cast<const BlockQ2_K*>(x), y, n); return true;
    case DType::kQ3_K: DequantizeQ3_KRef(static_cast<const BlockQ3_K*>(x), y, n); return true;
    case DType::kMXFP4: DequantizeMXFP4Ref(static_cast<const BlockMXFP4*>(x), y, n); return true;
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

namespace {

// The element of largest magnitude of x[0, n), the first one on ties (ggml's Q4_0 and Q5_0
// scale), sign kept.
float LargestMagnitude(const float* x, int n) {
  float amax = 0.0f;
  float max = 0.0f;
  for (int j = 0; j < n; j++) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

}  // namespace

void QuantizeQ4_0Ref(const float* x, BlockQ4_0* y, int64_t n) {
  constexpr int kHalf = kQk4_0 / 2;
  for (int64_t b = 0; b < n / kQk4_0; b++) {
    const float* in = x + b * kQk4_0;  // [32]
    const float max = LargestMagnitude(in, kQk4_0);
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

void QuantizeQ5_0Ref(const float* x, BlockQ5_0* y, int64_t n) {
  constexpr int kHalf = kQk4_0 / 2;
  for (int64_t b = 0; b < n / kQk4_0; b++) {
    const float* in = x + b * kQk4_0;  // [32]
    const float max = LargestMagnitude(in, kQk4_0);
    const float d = max / -16.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = Fp32ToFp16(d);
    uint32_t qh = 0;
    for (int j = 0; j < kHalf; j++) {
      // (int8_t) truncates toward zero, as in ggml; the values are in [0.5, 32.5] here.
      const int lo = std::min(31, static_cast<int>(static_cast<int8_t>(in[j] * id + 16.5f)));
      const int hi =
          std::min(31, static_cast<int>(static_cast<int8_t>(in[j + kHalf] * id + 16.5f)));
      y[b].qs[j] = static_cast<uint8_t>((lo & 0x0f) | ((hi & 0x0f) << 4));
      qh |= static_cast<uint32_t>(lo >> 4) << j;
      qh |= static_cast<uint32_t>(hi >> 4) << (j + kHalf);
    }
    std::memcpy(y[b].qh, &qh, sizeof(qh));
  }
}

namespace {

using quant_fit::ClampInto;
using quant_fit::FitScaleMinSubBlock;
using quant_fit::FitSymmetricSubBlock;
using quant_fit::RoundClamp;
using quant_fit::ScaleMin;
using quant_fit::SuperScale;

// The largest magnitudes the formats can reach are 65504 * 63 * 15 ~ 6.2e7 (Q4_K), 65504 * 63 *
// 31 ~ 1.3e8 (Q5_K) and 65504 * 127 * 32 ~ 2.7e8 (Q6_K); clamping inputs a little beyond keeps
// every sum finite.
constexpr float kQ4KInputLimit = 1e8f;
constexpr float kQ5KInputLimit = 2e8f;
constexpr float kQ6KInputLimit = 1e9f;

// The inverse of ScaleMinK4: 6-bit scales sc: [8] and mins m: [8] into the 12 packed bytes.
void PackScaleMinK4(const uint8_t* sc, const uint8_t* m, uint8_t* q) {
  for (int j = 0; j < 4; j++) {
    q[j] = static_cast<uint8_t>(sc[j] | ((sc[j + 4] >> 4) << 6));
    q[j + 4] = static_cast<uint8_t>(m[j] | ((m[j + 4] >> 4) << 6));
    q[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0x0f) | ((m[j + 4] & 0x0f) << 4));
  }
}

// The shared part of the Q4_K / Q5_K quantizers: the 8 sub-blocks of in: [256] (clamped to
// `limit`) fitted with quants 0..qmax, the super-block scales d and dmin in fp16, the 6-bit
// scales and mins packed into `scales`, and every quant q: [256] against the stored scale and min.
void QuantizeScaleMinBlock(const float* in, float limit, int qmax, uint16_t* d_out,
                           uint16_t* dmin_out, uint8_t* scales, uint8_t* q) {
  constexpr int kSub = 32, kSubs = kQkK / kSub;
  float x[kQkK];
  ClampInto(in, kQkK, limit, x);
  ScaleMin fit[kSubs];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int s = 0; s < kSubs; s++) {
    fit[s] = FitScaleMinSubBlock(x + kSub * s, kSub, qmax);
    max_scale = std::fmax(max_scale, fit[s].scale);
    max_min = std::fmax(max_min, fit[s].min);
  }
  *d_out = SuperScale(max_scale / 63.0f);
  *dmin_out = SuperScale(max_min / 63.0f);
  const float d = Fp16ToFp32(*d_out), dmin = Fp16ToFp32(*dmin_out);
  uint8_t sc[kSubs], m[kSubs];
  for (int s = 0; s < kSubs; s++) {
    sc[s] = static_cast<uint8_t>(d > 0.0f ? RoundClamp(fit[s].scale / d, 0, 63) : 0);
    m[s] = static_cast<uint8_t>(dmin > 0.0f ? RoundClamp(fit[s].min / dmin, 0, 63) : 0);
  }
  PackScaleMinK4(sc, m, scales);
  for (int s = 0; s < kSubs; s++) {
    const float step = d * sc[s], offset = dmin * m[s];
    for (int i = kSub * s; i < kSub * (s + 1); i++) {
      q[i] = static_cast<uint8_t>(step > 0.0f ? RoundClamp((x[i] + offset) / step, 0, qmax) : 0);
    }
  }
}

void QuantizeQ4_KBlock(const float* in, BlockQ4_K* y) {
  uint8_t q[kQkK];
  QuantizeScaleMinBlock(in, kQ4KInputLimit, 15, &y->d, &y->dmin, y->scales, q);
  // Group g of 64 elements: the first 32 in the low nibbles of qs[32g ..], the next 32 high.
  for (int g = 0; g < kQkK / 64; g++) {
    for (int l = 0; l < 32; l++) {
      y->qs[32 * g + l] = static_cast<uint8_t>(q[64 * g + l] | (q[64 * g + 32 + l] << 4));
    }
  }
}

void QuantizeQ5_KBlock(const float* in, BlockQ5_K* y) {
  uint8_t q[kQkK];
  QuantizeScaleMinBlock(in, kQ5KInputLimit, 31, &y->d, &y->dmin, y->scales, q);
  // Q4_K's nibbles, and the fifth bit of element l of sub-block s in bit s of qh[l].
  std::memset(y->qh, 0, sizeof(y->qh));
  for (int g = 0; g < kQkK / 64; g++) {
    for (int l = 0; l < 32; l++) {
      const uint8_t lo = q[64 * g + l], hi = q[64 * g + 32 + l];
      y->qs[32 * g + l] = static_cast<uint8_t>((lo & 0x0f) | ((hi & 0x0f) << 4));
      y->qh[l] |= static_cast<uint8_t>(((lo >> 4) << (2 * g)) | ((hi >> 4) << (2 * g + 1)));
    }
  }
}

void QuantizeQ6_KBlock(const float* in, BlockQ6_K* y) {
  constexpr int kSub = 16, kSubs = kQkK / kSub;
  float x[kQkK];
  ClampInto(in, kQkK, kQ6KInputLimit, x);
  float fit[kSubs];
  float max_scale = 0.0f;
  for (int s = 0; s < kSubs; s++) {
    fit[s] = FitSymmetricSubBlock(x + kSub * s, kSub, 32);
    max_scale = std::fmax(max_scale, std::fabs(fit[s]));
  }
  y->d = SuperScale(max_scale / 127.0f);
  const float d = Fp16ToFp32(y->d);
  uint8_t q[kQkK];  // biased quants 0..63 against the stored scales
  for (int s = 0; s < kSubs; s++) {
    y->scales[s] = static_cast<int8_t>(d > 0.0f ? RoundClamp(fit[s] / d, -128, 127) : 0);
    const float step = d * y->scales[s];
    for (int i = kSub * s; i < kSub * (s + 1); i++) {
      q[i] = static_cast<uint8_t>((step != 0.0f ? RoundClamp(x[i] / step, -32, 31) : 0) + 32);
    }
  }
  PackQ6_KQuants(q, y);
}

}  // namespace

void PackQ6_KQuants(const uint8_t* q, BlockQ6_K* y) {
  // The layout DequantizeQ6_KRef reads: half h, l < 32 -> elements 128h + l + {0, 32, 64, 96}.
  for (int h = 0; h < 2; h++) {
    const uint8_t* e = q + 128 * h;
    for (int l = 0; l < 32; l++) {
      y->ql[64 * h + l] = static_cast<uint8_t>((e[l] & 0x0f) | ((e[l + 64] & 0x0f) << 4));
      y->ql[64 * h + l + 32] = static_cast<uint8_t>((e[l + 32] & 0x0f) | ((e[l + 96] & 0x0f) << 4));
      y->qh[32 * h + l] = static_cast<uint8_t>((e[l] >> 4) | ((e[l + 32] >> 4) << 2) |
                                               ((e[l + 64] >> 4) << 4) | ((e[l + 96] >> 4) << 6));
    }
  }
}

void QuantizeQ4_KRef(const float* x, BlockQ4_K* y, int64_t n) {
  for (int64_t b = 0; b < n / kQkK; b++) QuantizeQ4_KBlock(x + b * kQkK, y + b);
}

void QuantizeQ5_KRef(const float* x, BlockQ5_K* y, int64_t n) {
  for (int64_t b = 0; b < n / kQkK; b++) QuantizeQ5_KBlock(x + b * kQkK, y + b);
}

void QuantizeQ6_KRef(const float* x, BlockQ6_K* y, int64_t n) {
  for (int64_t b = 0; b < n / kQkK; b++) QuantizeQ6_KBlock(x + b * kQkK, y + b);
}

}  // namespace smallmind::kernels
