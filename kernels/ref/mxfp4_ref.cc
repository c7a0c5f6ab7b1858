// MXFP4, the OCP microscaling 4-bit float (E2M1 elements, one E8M0 exponent per 32): ggml's
// block_mxfp4 dequantizer and reference quantizer, read as dequantize_row_mxfp4 and
// quantize_row_mxfp4_ref define them (the levels doubled to integers, the scale halved).
// Declared in dequant_ref.h.
#include <cmath>

#include "kernels/ref/dequant_ref.h"

namespace smallmind::kernels {

void DequantizeMXFP4Ref(const BlockMXFP4* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / 32; b++) {
    const float d = E8M0HalfToFp32(x[b].e);
    float* out = y + b * 32;  // [32]: low nibbles 0..15, high nibbles 16..31
    for (int j = 0; j < 16; j++) {
      out[j] = static_cast<float>(kMxfp4Values[x[b].qs[j] & 0x0f]) * d;
      out[j + 16] = static_cast<float>(kMxfp4Values[x[b].qs[j] >> 4]) * d;
    }
  }
}

namespace {

// The code whose value times d is nearest v; the first (lowest code) of equals, so +0 (code 0)
// wins over -0 (code 8), as ggml's best_index_mxfp4 scans them.
uint8_t NearestCode(float v, float d) {
  uint8_t best = 0;
  float best_err = std::fabs(static_cast<float>(kMxfp4Values[0]) * d - v);
  for (uint8_t c = 1; c < 16; c++) {
    const float err = std::fabs(static_cast<float>(kMxfp4Values[c]) * d - v);
    if (err < best_err) {
      best_err = err;
      best = c;
    }
  }
  return best;
}

// ggml's exponent: floor(log2(amax)) - 2 + 127 (the largest level, 6 = 1.5 * 2^2, then holds
// amax's binade), cast to a byte as ggml casts it; 0 for an all-zero (or NaN) block.
uint8_t BlockExponent(const float* x) {
  float amax = 0.0f;
  for (int j = 0; j < 32; j++) amax = std::fmax(amax, std::fabs(x[j]));
  if (!(amax > 0.0f)) return 0;
  const float e = std::floor(std::log2(amax)) - 2.0f + 127.0f;
  return static_cast<uint8_t>(std::fmin(std::fmax(e, 0.0f), 255.0f));
}

}  // namespace

void QuantizeMXFP4Ref(const float* x, BlockMXFP4* y, int64_t n) {
  for (int64_t b = 0; b < n / 32; b++) {
    const float* in = x + b * 32;
    y[b].e = BlockExponent(in);
    const float d = E8M0HalfToFp32(y[b].e);
    for (int j = 0; j < 16; j++) {
      y[b].qs[j] = static_cast<uint8_t>(NearestCode(in[j], d) | (NearestCode(in[j + 16], d) << 4));
    }
  }
}

}  // namespace smallmind::kernels
