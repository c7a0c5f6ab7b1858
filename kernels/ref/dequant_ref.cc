// Block formats follow ggml's definitions (ggml/src/ggml-common.h for the structs,
// ggml/src/ggml-quants.c dequantize_row_* and quantize_row_q8_0/q4_0_ref for the arithmetic). The
// element order inside each block is spelled out next to each routine. The K-quant quantizers at
// the end are smallmind's own: they write exactly what the dequantizers here read back.
#include "kernels/ref/dequant_ref.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

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
    case DType::kQ4_K: DequantizeQ4_KRef(static_cast<const BlockQ4_K*>(x), y, n); return true;
    case DType::kQ5_K: DequantizeQ5_KRef(static_cast<const BlockQ5_K*>(x), y, n); return true;
    case DType::kQ6_K: DequantizeQ6_KRef(static_cast<const BlockQ6_K*>(x), y, n); return true;
    case DType::kIQ4_XS: DequantizeIQ4_XSRef(static_cast<const BlockIQ4_XS*>(x), y, n); return true;
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

namespace {

constexpr float kMaxFp16 = 65504.0f;  // largest finite half: the cap of every super-block scale
// The largest magnitudes the formats can reach are 65504 * 63 * 15 ~ 6.2e7 (Q4_K), 65504 * 63 *
// 31 ~ 1.3e8 (Q5_K) and 65504 * 127 * 32 ~ 2.7e8 (Q6_K); clamping inputs a little beyond keeps
// every sum finite.
constexpr float kQ4KInputLimit = 1e8f;
constexpr float kQ5KInputLimit = 2e8f;
constexpr float kQ6KInputLimit = 1e9f;
// Each sub-block tries the step that spans its range in exactly the format's levels, and steps
// that span it in up to 1 level fewer or more, kFitStep apart, each refined by least squares. On
// Gaussian data the 9 candidates cut the RMS error 5.5% (Q4_K) / 6% (Q6_K) against the plain
// step alone; 17 candidates gain another 0.2% at twice the time (~30 ns per element here).
constexpr int kFitCandidates = 4;  // on each side of the plain step
constexpr float kFitStep = 0.25f;
// Sub-block ranges below this give steps far below fp16's smallest subnormal (6e-8): stored as 0.
constexpr float kMinRange = 1e-30f;

// x clamped to [-limit, limit] into out: [n]; NaN reads as 0.
void ClampInto(const float* x, int n, float limit, float* out) {
  for (int i = 0; i < n; i++) out[i] = x[i] != x[i] ? 0.0f : std::clamp(x[i], -limit, limit);
}

// v clamped to [lo, hi] then rounded half up. NaN reads as lo (std::max(lo, NaN) is lo) and the
// clamp comes before the conversion, so inf is safe; plain compares keep it a few instructions.
int RoundClamp(float v, int lo, int hi) {
  v = std::min(static_cast<float>(hi), std::max(static_cast<float>(lo), v));
  return static_cast<int>(v - static_cast<float>(lo) + 0.5f) + lo;
}

// Sums over one sub-block x: [n] (n even, <= 32) of q, q^2 and q * x for the candidate quants
// q = clamp(round((x - origin) * iscale + bias), 0, qmax) - bias, where the caller keeps
// (x - origin) * iscale within [-bias - 1, qmax + 1] so the truncating conversion is safe and
// rounds half up. Integer clamps and two q * x chains keep the candidates cheap.
struct QuantSums {
  float q, qq, qx;
};

QuantSums SumQuants(const float* x, int n, float origin, float iscale, int bias, int qmax) {
  const float shift = static_cast<float>(bias) + 0.5f;
  int q[32];
  for (int i = 0; i < n; i++) {
    q[i] = std::clamp(static_cast<int>((x[i] - origin) * iscale + shift), 0, qmax) - bias;
  }
  int sq = 0, sqq = 0;
  for (int i = 0; i < n; i++) {
    sq += q[i];
    sqq += q[i] * q[i];
  }
  float sqx0 = 0.0f, sqx1 = 0.0f;
  for (int i = 0; i < n; i += 2) {
    sqx0 += static_cast<float>(q[i]) * x[i];
    sqx1 += static_cast<float>(q[i + 1]) * x[i + 1];
  }
  return {static_cast<float>(sq), static_cast<float>(sqq), sqx0 + sqx1};
}

struct ScaleMin {
  float scale;  // >= 0
  float min;    // >= 0; x ~ scale * q - min
};

// Least-squares fit of x ~ scale * q - min with q in 0..qmax (Q4_K 15, Q5_K 31) and min >= 0
// over one sub-block x: [n]. q comes from spreading [min(x, 0), max(x)] over qmax +-
// kFitCandidates * kFitStep levels; each candidate q gets its best (scale, min) and the smallest
// squared error wins.
ScaleMin FitScaleMinSubBlock(const float* x, int n, int qmax) {
  float lo = 0.0f, hi = x[0];
  double sx = 0.0, sxx = 0.0;
  for (int i = 0; i < n; i++) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
    sx += x[i];
    sxx += double{x[i]} * x[i];
  }
  const float levels = static_cast<float>(qmax);
  ScaleMin best{(hi - lo) / levels, 0.0f - lo};  // 0 - lo: +0, never -0, for lo = 0
  // A constant <= 0 (zeros included) is x = -min exactly; a range below kMinRange would give
  // a step that underflows fp16 anyway (and an infinite inverse step).
  if (!(hi - lo > kMinRange)) return {0.0f, best.min};
  double best_err = std::numeric_limits<double>::infinity();
  for (int c = -kFitCandidates; c <= kFitCandidates; c++) {
    const float iscale = (levels + kFitStep * static_cast<float>(c)) / (hi - lo);
    const QuantSums sums = SumQuants(x, n, lo, iscale, 0, qmax);
    const double sq = sums.q, sqq = sums.qq, sqx = sums.qx;
    // Minimise sum (a q + b - x)^2 over a and b <= 0 (b = -min): the 2x2 normal equations,
    // or b = 0 with a alone when their b would be positive.
    const double det = n * sqq - sq * sq;
    if (det <= 0.0) continue;  // every q equal: no slope to fit
    double a = (n * sqx - sq * sx) / det;
    double b = (sqq * sx - sq * sqx) / det;
    if (b > 0.0) {
      b = 0.0;
      a = sqx / sqq;
    }
    if (a <= 0.0) continue;
    const double err = sxx + a * a * sqq + n * b * b - 2 * a * sqx - 2 * b * sx + 2 * a * b * sq;
    if (err < best_err) {
      best_err = err;
      best = {static_cast<float>(a), static_cast<float>(-b)};
    }
  }
  return best;
}

// Least-squares fit of x ~ scale * q with q in -32..31 over one Q6_K sub-block x: [n]. The
// element of largest magnitude maps to about -32 (the longer side; scale takes its sign) with
// 32 +- kFitCandidates * kFitStep levels; the candidate q with the smallest squared error wins.
float FitQ6KSubBlock(const float* x, int n) {
  float amax = 0.0f, max = 0.0f;  // max: the element of largest magnitude, sign kept
  double sxx = 0.0;
  for (int i = 0; i < n; i++) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
    sxx += double{x[i]} * x[i];
  }
  if (!(amax > kMinRange)) return 0.0f;  // zeros, or a step that underflows fp16 anyway
  float best = max / -32.0f;
  double best_err = std::numeric_limits<double>::infinity();
  for (int c = -kFitCandidates; c <= kFitCandidates; c++) {
    const float iscale = -(32.0f + kFitStep * static_cast<float>(c)) / max;
    const QuantSums sums = SumQuants(x, n, 0.0f, iscale, 32, 63);
    const double sqq = sums.qq, sqx = sums.qx;
    if (sqq == 0.0) continue;
    const double a = sqx / sqq;
    const double err = sxx - a * sqx;  // the residual at the least-squares a
    if (err < best_err) {
      best_err = err;
      best = static_cast<float>(a);
    }
  }
  return best;
}

// fp16 of v >= 0, capped at the largest finite half.
uint16_t SuperScale(float v) { return Fp32ToFp16(std::fmin(v, kMaxFp16)); }

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
    fit[s] = FitQ6KSubBlock(x + kSub * s, kSub);
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

}  // namespace

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
