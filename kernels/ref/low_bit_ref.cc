// Element order, scales and signs of each format: kernels/low_bit_blocks.h (ggml-common.h's
// structs, ggml-quants.c's dequantize_row_* arithmetic). The quantizers are smallmind's own (Q4_1
// / Q5_1 ggml's reference formula): they write what the dequantizers here read back.
#include "kernels/ref/low_bit_ref.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/q8_act.h"
#include "kernels/ref/dequant_ref.h"
#include "kernels/ref/quant_fit.h"

namespace smallmind::kernels {
namespace {

using quant_fit::ClampInto;
using quant_fit::RoundClamp;
using quant_fit::SuperScale;

constexpr int kSub = 16;            // elements per Q2_K / Q3_K sub-block
constexpr int kSubs = kQkK / kSub;  // sub-blocks per super-block
// Largest magnitudes: Q2_K 65504 * 15 * 3 ~ 2.9e6 (its min as much), Q3_K 65504 * 32 * 4 ~ 8.4e6;
// inputs clamped a little inside keep every block finite.
constexpr float kQ2KInputLimit = 1e6f;
constexpr float kQ3KInputLimit = 4e6f;

// Q4_1 / Q5_1: the block's d and m and its unsigned quants q: [32] (ggml's formula).
void QuantizeMinBlock(const float* x, int qmax, uint16_t* d_out, uint16_t* m_out, uint8_t* q) {
  float lo = x[0], hi = x[0];
  for (int j = 1; j < kQk4_0; j++) {
    lo = std::min(lo, x[j]);
    hi = std::max(hi, x[j]);
  }
  const float d = (hi - lo) / static_cast<float>(qmax);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  *d_out = Fp32ToFp16(d);
  *m_out = Fp32ToFp16(lo);
  for (int j = 0; j < kQk4_0; j++) {
    q[j] = static_cast<uint8_t>(std::min(qmax, static_cast<int>((x[j] - lo) * id + 0.5f)));
  }
}

// Q2_K / Q3_K element e's 2-bit field into qs (K2BitField's inverse; qs zeroed first).
void SetK2BitField(uint8_t* qs, int e, int v) {
  qs[32 * (e / 128) + e % 32] |= static_cast<uint8_t>(v << (2 * (e % 128 / 32)));
}

void QuantizeQ2_KBlock(const float* in, BlockQ2_K* y) {
  float x[kQkK];
  ClampInto(in, kQkK, kQ2KInputLimit, x);
  quant_fit::ScaleMin fit[kSubs];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int s = 0; s < kSubs; s++) {
    fit[s] = quant_fit::FitScaleMinSubBlock(x + kSub * s, kSub, 3);
    max_scale = std::fmax(max_scale, fit[s].scale);
    max_min = std::fmax(max_min, fit[s].min);
  }
  y->d = SuperScale(max_scale / 15.0f);
  y->dmin = SuperScale(max_min / 15.0f);
  const float d = Fp16ToFp32(y->d), dmin = Fp16ToFp32(y->dmin);
  std::memset(y->qs, 0, sizeof(y->qs));
  for (int s = 0; s < kSubs; s++) {
    const int sc = d > 0.0f ? RoundClamp(fit[s].scale / d, 0, 15) : 0;
    const int m = dmin > 0.0f ? RoundClamp(fit[s].min / dmin, 0, 15) : 0;
    y->scales[s] = static_cast<uint8_t>(sc | m << 4);
    const float step = d * static_cast<float>(sc), offset = dmin * static_cast<float>(m);
    for (int e = kSub * s; e < kSub * (s + 1); e++) {
      SetK2BitField(y->qs, e, step > 0.0f ? RoundClamp((x[e] + offset) / step, 0, 3) : 0);
    }
  }
}

void QuantizeQ3_KBlock(const float* in, BlockQ3_K* y) {
  float x[kQkK];
  ClampInto(in, kQkK, kQ3KInputLimit, x);
  float fit[kSubs];
  float max_scale = 0.0f;
  for (int s = 0; s < kSubs; s++) {
    fit[s] = quant_fit::FitSymmetricSubBlock(x + kSub * s, kSub, 4);
    max_scale = std::fmax(max_scale, std::fabs(fit[s]));
  }
  y->d = SuperScale(max_scale / 31.0f);
  const float d = Fp16ToFp32(y->d);
  std::memset(y->hmask, 0, sizeof(y->hmask));
  std::memset(y->qs, 0, sizeof(y->qs));
  std::memset(y->scales, 0, sizeof(y->scales));
  for (int s = 0; s < kSubs; s++) {
    const int sc = d > 0.0f ? RoundClamp(fit[s] / d, -32, 31) : 0;
    const int v = sc + 32;  // the stored 6 bits
    y->scales[s % 8] |= static_cast<uint8_t>((v & 0x0f) << (s < 8 ? 0 : 4));
    y->scales[8 + s % 4] |= static_cast<uint8_t>((v >> 4) << (2 * (s / 4)));
    const float step = d * static_cast<float>(sc);
    for (int e = kSub * s; e < kSub * (s + 1); e++) {
      const int q = (step != 0.0f ? RoundClamp(x[e] / step, -4, 3) : 0) + 4;  // 0..7
      SetK2BitField(y->qs, e, q & 3);
      if (q >= 4) y->hmask[e % 32] |= static_cast<uint8_t>(1 << (e % 128 / 32 + 4 * (e / 128)));
    }
  }
}

// The fields of row t of Q8 activation rows.
struct XRowRef {
  const int8_t* qs;
  const float* d;
  const float* s;
};
XRowRef XRowOf(const void* xq, int in_dim, int t) {
  const void* row = static_cast<const uint8_t*>(xq) + Q8ActRowBytes(in_dim) * t;
  return {Q8ActQuants(row), Q8ActScales(row, in_dim), Q8ActSums(row, in_dim)};
}

// y[t, r] = step(row r's blocks, x row, y) for the rows and tokens given.
template <typename Block, typename RowStep>
void MatmulRows(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                RowRange rows, int block_elems, RowStep step) {
  const int n_blocks = in_dim / block_elems;
  for (int r = rows.begin; r < rows.end; r++) {
    const Block* w_row = static_cast<const Block*>(w) + static_cast<int64_t>(r) * n_blocks;
    for (int t = 0; t < n_tokens; t++) {
      y[static_cast<int64_t>(t) * out_dim + r] = step(w_row, n_blocks, XRowOf(xq, in_dim, t));
    }
  }
}

// Q4_1 / Q5_1 over kQ8_1 rows.
template <typename Block, int (*Quant)(const Block&, int)>
float MinBlocksDot(const Block* w, int n_blocks, const XRowRef& x) {
  float val = 0.0f;
  for (int b = 0; b < n_blocks; b++) {
    int isum = 0;
    for (int j = 0; j < kQk4_0; j++) isum += Quant(w[b], j) * x.qs[kQk4_0 * b + j];
    val = std::fmaf(static_cast<float>(isum), Fp16ToFp32(w[b].d) * x.d[b], val);
    val = std::fmaf(Fp16ToFp32(w[b].m), x.s[b], val);
  }
  return val;
}

float Q3_KDot(const BlockQ3_K* w, int n_super, const XRowRef& x) {
  float val = 0.0f;
  for (int b = 0; b < n_super * 8; b++) {  // activation blocks of 32
    const BlockQ3_K& blk = w[b / 8];
    int isum = 0;
    for (int half = 0; half < 2; half++) {
      const int sub = 2 * (b % 8) + half;
      int sum = 0;
      for (int l = 0; l < kSub; l++) {
        sum += Q3_KQuant(blk, kSub * sub + l) * x.qs[32 * b + kSub * half + l];
      }
      isum += Q3_KScale(blk, sub) * sum;
    }
    val = std::fmaf(static_cast<float>(isum), Fp16ToFp32(blk.d) * x.d[b], val);
  }
  return val;
}

float Q2_KDot(const BlockQ2_K* w, int n_super, const XRowRef& x) {
  float val = 0.0f;
  for (int sb = 0; sb < n_super; sb++) {
    const BlockQ2_K& blk = w[sb];
    const int8_t* xs = x.qs + kQkK * sb;
    int isum = 0, msum = 0;
    for (int s = 0; s < kSubs; s++) {
      int dot = 0, xsum = 0;
      for (int e = kSub * s; e < kSub * (s + 1); e++) {
        dot += K2BitField(blk.qs, e) * xs[e];
        xsum += xs[e];
      }
      isum += (blk.scales[s] & 0x0f) * dot;
      msum += (blk.scales[s] >> 4) * xsum;
    }
    const float dx = x.d[8 * sb];  // kQ8K: the super-block's scale in each of its 8 blocks
    val = std::fmaf(static_cast<float>(isum), Fp16ToFp32(blk.d) * dx, val);
    val = std::fmaf(-static_cast<float>(msum), Fp16ToFp32(blk.dmin) * dx, val);
  }
  return val;
}

}  // namespace

void DequantizeQ4_1Ref(const BlockQ4_1* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQk4_0; b++) {
    const float d = Fp16ToFp32(x[b].d), m = Fp16ToFp32(x[b].m);
    for (int j = 0; j < kQk4_0; j++) {
      y[b * kQk4_0 + j] = static_cast<float>(Q4_1Quant(x[b], j)) * d + m;
    }
  }
}

void DequantizeQ5_1Ref(const BlockQ5_1* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQk4_0; b++) {
    const float d = Fp16ToFp32(x[b].d), m = Fp16ToFp32(x[b].m);
    for (int j = 0; j < kQk4_0; j++) {
      y[b * kQk4_0 + j] = static_cast<float>(Q5_1Quant(x[b], j)) * d + m;
    }
  }
}

void DequantizeQ2_KRef(const BlockQ2_K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQkK; b++) {
    const float d = Fp16ToFp32(x[b].d), dmin = Fp16ToFp32(x[b].dmin);
    for (int e = 0; e < kQkK; e++) {
      const uint8_t sc = x[b].scales[e / kSub];
      const float dl = d * static_cast<float>(sc & 0x0f), ml = dmin * static_cast<float>(sc >> 4);
      y[b * kQkK + e] = dl * static_cast<float>(K2BitField(x[b].qs, e)) - ml;
    }
  }
}

void DequantizeQ3_KRef(const BlockQ3_K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQkK; b++) {
    const float d = Fp16ToFp32(x[b].d);
    for (int e = 0; e < kQkK; e++) {
      const float dl = d * static_cast<float>(Q3_KScale(x[b], e / kSub));
      y[b * kQkK + e] = dl * static_cast<float>(Q3_KQuant(x[b], e));
    }
  }
}

void QuantizeQ4_1Ref(const float* x, BlockQ4_1* y, int64_t n) {
  for (int64_t b = 0; b < n / kQk4_0; b++) {
    uint8_t q[kQk4_0];
    QuantizeMinBlock(x + b * kQk4_0, 15, &y[b].d, &y[b].m, q);
    for (int j = 0; j < kQk4_0 / 2; j++) y[b].qs[j] = static_cast<uint8_t>(q[j] | q[j + 16] << 4);
  }
}

void QuantizeQ5_1Ref(const float* x, BlockQ5_1* y, int64_t n) {
  for (int64_t b = 0; b < n / kQk4_0; b++) {
    uint8_t q[kQk4_0];
    QuantizeMinBlock(x + b * kQk4_0, 31, &y[b].d, &y[b].m, q);
    uint32_t qh = 0;
    for (int j = 0; j < kQk4_0; j++) qh |= static_cast<uint32_t>(q[j] >> 4) << j;
    for (int j = 0; j < kQk4_0 / 2; j++) {
      y[b].qs[j] = static_cast<uint8_t>((q[j] & 0x0f) | (q[j + 16] & 0x0f) << 4);
    }
    std::memcpy(y[b].qh, &qh, sizeof(qh));
  }
}

void QuantizeQ2_KRef(const float* x, BlockQ2_K* y, int64_t n) {
  for (int64_t b = 0; b < n / kQkK; b++) QuantizeQ2_KBlock(x + b * kQkK, y + b);
}

void QuantizeQ3_KRef(const float* x, BlockQ3_K* y, int64_t n) {
  for (int64_t b = 0; b < n / kQkK; b++) QuantizeQ3_KBlock(x + b * kQkK, y + b);
}

BlockQ6_K WidenQ3_KToQ6_K(const BlockQ3_K& b) {
  BlockQ6_K w;
  uint8_t q[kQkK];
  for (int e = 0; e < kQkK; e++) q[e] = static_cast<uint8_t>(Q3_KQuant(b, e) + 32);
  PackQ6_KQuants(q, &w);
  for (int s = 0; s < kSubs; s++) w.scales[s] = static_cast<int8_t>(Q3_KScale(b, s));
  w.d = b.d;
  return w;
}

void MatmulQ4_1Q8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulRows<BlockQ4_1>(w, xq, y, n_tokens, in_dim, out_dim, rows, kQk4_0,
                        MinBlocksDot<BlockQ4_1, Q4_1Quant>);
}

void MatmulQ5_1Q8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulRows<BlockQ5_1>(w, xq, y, n_tokens, in_dim, out_dim, rows, kQk4_0,
                        MinBlocksDot<BlockQ5_1, Q5_1Quant>);
}

void MatmulQ2_KQ8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulRows<BlockQ2_K>(w, xq, y, n_tokens, in_dim, out_dim, rows, kQkK, Q2_KDot);
}

void MatmulQ3_KQ8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulRows<BlockQ3_K>(w, xq, y, n_tokens, in_dim, out_dim, rows, kQkK, Q3_KDot);
}

}  // namespace smallmind::kernels
