// IQ4_XS, the non-linear 4-bit K-quant, and IQ4_NL, its levels in plain blocks of 32: their
// dequantizers (ggml's block_iq4_xs / block_iq4_nl, read as dequantize_row_iq4_xs / _iq4_nl define
// them) and smallmind's own quantizers, which write what the dequantizers read back (one
// sub-block fit for both). Declared in dequant_ref.h.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/ref/dequant_ref.h"

namespace smallmind::kernels {

int Iq4XsScale(const BlockIQ4_XS& b, int s) {
  const int lo = (b.scales_l[s / 2] >> (4 * (s % 2))) & 0x0f;
  const int hi = (b.scales_h >> (2 * s)) & 3;
  return (lo | (hi << 4)) - 32;
}

void DequantizeIQ4_XSRef(const BlockIQ4_XS* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQkK; b++) {
    const float d = Fp16ToFp32(x[b].d);
    for (int s = 0; s < kQkK / 32; s++) {
      const float dl = d * static_cast<float>(Iq4XsScale(x[b], s));
      const uint8_t* q = x[b].qs + 16 * s;
      float* out = y + b * kQkK + 32 * s;  // [32]: low nibbles 0..15, high nibbles 16..31
      for (int j = 0; j < 16; j++) {
        out[j] = dl * static_cast<float>(kIq4NlValues[q[j] & 0x0f]);
        out[j + 16] = dl * static_cast<float>(kIq4NlValues[q[j] >> 4]);
      }
    }
  }
}

void DequantizeIQ4_NLRef(const BlockIQ4_NL* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / 32; b++) {
    const float d = Fp16ToFp32(x[b].d);
    float* out = y + b * 32;  // [32]: low nibbles 0..15, high nibbles 16..31
    for (int j = 0; j < 16; j++) {
      out[j] = d * static_cast<float>(kIq4NlValues[x[b].qs[j] & 0x0f]);
      out[j + 16] = d * static_cast<float>(kIq4NlValues[x[b].qs[j] >> 4]);
    }
  }
}

namespace {

// Sub-block scales below this give values far below fp16's smallest subnormal: stored as 0.
constexpr float kMinScale = 1e-30f;
// The largest magnitude the format reaches is 65504 * 32 * 127 ~ 2.7e8; inputs are clamped a
// little beyond so every sum stays finite. NaN reads as 0.
constexpr float kInputLimit = 1e9f;
// Candidate sub-block scales: the element of largest magnitude mapped onto the table's largest
// level of its sign and kCandidates steps of kStep levels inward and outward on each side.
constexpr int kCandidates = 6;
constexpr float kStep = 0.1f;

// The index of the level nearest v (the lower one on a tie).
int NearestLevel(float v) {
  int best = 0;
  float best_err = std::numeric_limits<float>::infinity();
  for (int i = 0; i < 16; i++) {
    const float err = std::fabs(v - static_cast<float>(kIq4NlValues[i]));
    if (err < best_err) {
      best_err = err;
      best = i;
    }
  }
  return best;
}

// The least-squares scale s of x ~ s * level over one sub-block x: [32] whose levels are picked
// against x / trial; *err gets the squared error at s.
float FitScale(const float* x, float trial, double* err) {
  double sxl = 0.0, sll = 0.0, sxx = 0.0;
  for (int i = 0; i < 32; i++) {
    const double l = kIq4NlValues[NearestLevel(x[i] / trial)];
    sxl += l * x[i];
    sll += l * l;
    sxx += double{x[i]} * x[i];
  }
  const double s = sll > 0.0 ? sxl / sll : 0.0;
  *err = sxx - s * sxl;
  return static_cast<float>(s);
}

// The best scale of one sub-block x: [32] over the candidates (signed: the table is asymmetric).
float SubBlockScale(const float* x) {
  float amax = 0.0f, max = 0.0f;
  for (int i = 0; i < 32; i++) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  }
  if (!(amax > kMinScale)) return 0.0f;
  float best = max / -127.0f;
  double best_err = std::numeric_limits<double>::infinity();
  for (float edge : {-127.0f, 113.0f}) {  // max onto the lowest or the highest level
    for (int c = -kCandidates; c <= kCandidates; c++) {
      double err = 0.0;
      const float s = FitScale(x, max / (edge * (1.0f + kStep * static_cast<float>(c) / 8)), &err);
      if (s != 0.0f && err < best_err) {
        best_err = err;
        best = s;
      }
    }
  }
  return best;
}

void QuantizeIQ4_XSBlock(const float* in, BlockIQ4_XS* y) {
  float x[kQkK];
  for (int i = 0; i < kQkK; i++) {
    x[i] = in[i] != in[i] ? 0.0f : std::clamp(in[i], -kInputLimit, kInputLimit);
  }
  float scale[8];
  float amax = 0.0f;
  for (int s = 0; s < 8; s++) {
    scale[s] = SubBlockScale(x + 32 * s);
    amax = std::fmax(amax, std::fabs(scale[s]));
  }
  y->d = Fp32ToFp16(std::fmin(amax / 31.0f, 65504.0f));
  const float d = Fp16ToFp32(y->d);
  y->scales_h = 0;
  std::memset(y->scales_l, 0, sizeof(y->scales_l));
  for (int s = 0; s < 8; s++) {
    const float r = d > 0.0f ? std::nearbyint(scale[s] / d) : 0.0f;
    const int ls = static_cast<int>(std::clamp(r, -32.0f, 31.0f)) + 32;
    y->scales_l[s / 2] |= static_cast<uint8_t>((ls & 0x0f) << (4 * (s % 2)));
    y->scales_h |= static_cast<uint16_t>((ls >> 4) << (2 * s));
    const float step = d * static_cast<float>(ls - 32);  // the stored scale
    for (int j = 0; j < 16; j++) {
      const float* e = x + 32 * s;
      const int lo = step != 0.0f ? NearestLevel(e[j] / step) : 8;  // 8: level 1, nearest 0
      const int hi = step != 0.0f ? NearestLevel(e[j + 16] / step) : 8;
      y->qs[16 * s + j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

void QuantizeIQ4_NLBlock(const float* in, BlockIQ4_NL* y) {
  float x[32];
  for (int i = 0; i < 32; i++) {
    x[i] = in[i] != in[i] ? 0.0f : std::clamp(in[i], -kInputLimit, kInputLimit);
  }
  y->d = Fp32ToFp16(std::clamp(SubBlockScale(x), -65504.0f, 65504.0f));
  const float d = Fp16ToFp32(y->d);
  for (int j = 0; j < 16; j++) {
    const int lo = d != 0.0f ? NearestLevel(x[j] / d) : 8;  // 8: level 1, nearest 0
    const int hi = d != 0.0f ? NearestLevel(x[j + 16] / d) : 8;
    y->qs[j] = static_cast<uint8_t>(lo | (hi << 4));
  }
}

}  // namespace

void QuantizeIQ4_NLRef(const float* x, BlockIQ4_NL* y, int64_t n) {
  for (int64_t b = 0; b < n / 32; b++) QuantizeIQ4_NLBlock(x + b * 32, y + b);
}

void QuantizeIQ4_XSRef(const float* x, BlockIQ4_XS* y, int64_t n) {
  for (int64_t b = 0; b < n / kQkK; b++) QuantizeIQ4_XSBlock(x + b * kQkK, y + b);
}

}  // namespace smallmind::kernels
