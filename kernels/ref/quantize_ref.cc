#include "kernels/ref/quantize_ref.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/q8_act.h"
#include "kernels/quant_blocks.h"
#include "kernels/ref/dequant_ref.h"

namespace smallmind::kernels {
namespace {

// The exact integer dot product of one weight block with 32 activation quants.
int BlockDot(const BlockQ8_0& w, const int8_t* x) {
  int sum = 0;
  for (int j = 0; j < kQk8_0; j++) sum += w.qs[j] * x[j];
  return sum;
}
int BlockDot(const BlockQ4_0& w, const int8_t* x) {
  int sum = 0;
  for (int j = 0; j < kQk4_0 / 2; j++) {
    sum += ((w.qs[j] & 0x0f) - 8) * x[j];
    sum += ((w.qs[j] >> 4) - 8) * x[j + kQk4_0 / 2];
  }
  return sum;
}

int BlockDot(const BlockQ5_0& w, const int8_t* x) {
  int sum = 0;
  for (int j = 0; j < kQk4_0; j++) sum += Q5_0Quant(w, j) * x[j];
  return sum;
}
int BlockDot(const BlockIQ4_NL& w, const int8_t* x) {
  int sum = 0;
  for (int j = 0; j < kQk4_0 / 2; j++) {
    sum += kIq4NlValues[w.qs[j] & 0x0f] * x[j];
    sum += kIq4NlValues[w.qs[j] >> 4] * x[j + kQk4_0 / 2];
  }
  return sum;
}

int BlockDot(const BlockMXFP4& w, const int8_t* x) {
  int sum = 0;
  for (int j = 0; j < kQk4_0 / 2; j++) {
    sum += kMxfp4Values[w.qs[j] & 0x0f] * x[j];
    sum += kMxfp4Values[w.qs[j] >> 4] * x[j + kQk4_0 / 2];
  }
  return sum;
}

// The weight block's scale: its fp16 d, or MXFP4's 2^(e - 128).
template <typename Block>
float WeightScale(const Block& b) {
  return Fp16ToFp32(b.d);
}
float WeightScale(const BlockMXFP4& b) { return E8M0HalfToFp32(b.e); }

template <typename Block>
void MatmulQ8Act(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                 RowRange rows) {
  const int n_blocks = in_dim / kQ8ActBlock;
  const size_t x_row_bytes = Q8ActRowBytes(in_dim);
  for (int r = rows.begin; r < rows.end; r++) {
    const Block* w_row = static_cast<const Block*>(w) + static_cast<int64_t>(r) * n_blocks;
    for (int t = 0; t < n_tokens; t++) {
      const void* x_row = static_cast<const uint8_t*>(xq) + x_row_bytes * t;
      const int8_t* qs = Q8ActQuants(x_row);
      const float* d = Q8ActScales(x_row, in_dim);
      float val = 0.0f;
      for (int b = 0; b < n_blocks; b++) {
        const float scale = WeightScale(w_row[b]) * d[b];
        val += scale * static_cast<float>(BlockDot(w_row[b], qs + kQ8ActBlock * b));
      }
      y[static_cast<int64_t>(t) * out_dim + r] = val;
    }
  }
}

// The 6-bit scale and min of Q4_K sub-block j (ggml's get_scale_min_k4, as in dequant_ref.cc).
void ScaleMinK4(int j, const uint8_t* q, int* scale, int* min) {
  if (j < 4) {
    *scale = q[j] & 63;
    *min = q[j + 4] & 63;
  } else {
    *scale = (q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4);
    *min = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// Q4_K: sub-block j of super-block `blk` against 32 activation quants; sets the 6-bit scale and
// min and returns sum of nibble * x.
int SubBlockDot(const BlockQ4_K& blk, int j, const int8_t* x, int* scale, int* min) {
  ScaleMinK4(j, blk.scales, scale, min);
  const uint8_t* q = blk.qs + 32 * (j / 2);  // low nibbles: sub-block 2g, high: 2g + 1
  const int shift = 4 * (j % 2);
  int sum = 0;
  for (int l = 0; l < 32; l++) sum += ((q[l] >> shift) & 0x0f) * x[l];
  return sum;
}

// Q5_K: sub-block j against 32 activation quants as Q4_K's, the quant's fifth bit (bit j of qh[l])
// added.
int SubBlockDot(const BlockQ5_K& blk, int j, const int8_t* x, int* scale, int* min) {
  ScaleMinK4(j, blk.scales, scale, min);
  const uint8_t* q = blk.qs + 32 * (j / 2);
  const int shift = 4 * (j % 2);
  int sum = 0;
  for (int l = 0; l < 32; l++) {
    sum += (((q[l] >> shift) & 0x0f) | (((blk.qh[l] >> j) & 1) << 4)) * x[l];
  }
  return sum;
}

// Q6_K: the quant (0..63, offset not applied) of element e (0..255) of the super-block.
int Q6Quant(const BlockQ6_K& blk, int e) {
  const int h = e / 128, k = e % 128 / 32, l = e % 32;  // half, quarter of the half, position
  const uint8_t lo = blk.ql[64 * h + l + 32 * (k % 2)];
  const int nibble = k < 2 ? lo & 0x0f : lo >> 4;
  return nibble | (((blk.qh[32 * h + l] >> (2 * k)) & 3) << 4);
}

// Q6_K: sc0 * isum0 + sc1 * isum1 of the two sub-blocks of 16 that element block b32 (0..7 in the
// super-block) covers, against its 32 activation quants.
int ScaledBlockDot(const BlockQ6_K& blk, int b32, const int8_t* x) {
  int total = 0;
  for (int half = 0; half < 2; half++) {
    const int sub = 2 * b32 + half;  // sub-block of 16, 0..15
    int sum = 0;
    for (int l = 0; l < 16; l++) sum += (Q6Quant(blk, 16 * sub + l) - 32) * x[16 * half + l];
    total += blk.scales[sub] * sum;
  }
  return total;
}

// The K-quant matmuls: y[t, r] = step(super-block, block in it, x quants, dx, s, y) over the
// activation blocks in order.
template <typename Block, typename Step>
void MatmulKQ8Act(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                  RowRange rows, Step step) {
  const int n_super = in_dim / kQkK;
  const size_t x_row_bytes = Q8ActRowBytes(in_dim);
  for (int r = rows.begin; r < rows.end; r++) {
    const Block* w_row = static_cast<const Block*>(w) + static_cast<int64_t>(r) * n_super;
    for (int t = 0; t < n_tokens; t++) {
      const void* x_row = static_cast<const uint8_t*>(xq) + x_row_bytes * t;
      float val = 0.0f;
      for (int b = 0; b < in_dim / kQ8ActBlock; b++) {
        val = step(w_row[b / 8], b % 8, Q8ActQuants(x_row) + kQ8ActBlock * b,
                   Q8ActScales(x_row, in_dim)[b], Q8ActSums(x_row, in_dim)[b], val);
      }
      y[static_cast<int64_t>(t) * out_dim + r] = val;
    }
  }
}

// IQ4_XS: (ls - 32) * (the exact dot product of sub-block j's levels with 32 activation quants).
int ScaledBlockDot(const BlockIQ4_XS& blk, int j, const int8_t* x) {
  const uint8_t* q = blk.qs + 16 * j;  // low nibbles: elements 0..15, high: 16..31
  int sum = 0;
  for (int l = 0; l < 16; l++) {
    sum += kIq4NlValues[q[l] & 0x0f] * x[l] + kIq4NlValues[q[l] >> 4] * x[l + 16];
  }
  return Iq4XsScale(blk, j) * sum;
}

// The Q4_K / Q5_K step of activation block j of a super-block: the scaled integers, then the min.
template <typename Block>
float ScaleMinStep(const Block& blk, int j, const int8_t* x, float dx, float sx, float val) {
  int scale = 0, min = 0;
  const int isum = SubBlockDot(blk, j, x, &scale, &min);
  val = std::fmaf(static_cast<float>(scale * isum), Fp16ToFp32(blk.d) * dx, val);
  return std::fmaf(-(Fp16ToFp32(blk.dmin) * static_cast<float>(min)), sx, val);
}

}  // namespace

float QuantizeBlockQ8Ref(const float* x, int8_t* q) {
  float amax = 0.0f;
  for (int j = 0; j < kQ8ActBlock; j++) amax = std::fmax(amax, std::fabs(x[j]));
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int j = 0; j < kQ8ActBlock; j++) q[j] = static_cast<int8_t>(std::nearbyint(x[j] * id));
  return d;
}

float QuantizeBlockQ8_0Ref(const float* x, int8_t* q, float* d_exact) {
  float amax = 0.0f;
  for (int j = 0; j < kQ8ActBlock; j++) amax = std::fmax(amax, std::fabs(x[j]));
  const float d = amax / 127.0f;
  const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
  for (int j = 0; j < kQ8ActBlock; j++) q[j] = static_cast<int8_t>(std::nearbyint(x[j] * id));
  if (d_exact != nullptr) *d_exact = d;
  return Fp16ToFp32(Fp32ToFp16(d));
}

namespace {

// The fields of row t of a Q8 row buffer (kernels/q8_act.h).
struct Q8RowFields {
  int8_t* qs;      // [in_dim]
  float* d;        // [in_dim / 32]
  float* s;        // [in_dim / 32]
  int32_t* qsums;  // [in_dim / 32]
};
Q8RowFields RowFields(void* xq, int in_dim, int t) {
  auto* row = static_cast<uint8_t*>(xq) + Q8ActRowBytes(in_dim) * t;
  auto* d = reinterpret_cast<float*>(row + in_dim);
  float* s = d + in_dim / kQ8ActBlock;
  return Q8RowFields{reinterpret_cast<int8_t*>(row), d, s,
                     reinterpret_cast<int32_t*>(s + in_dim / kQ8ActBlock)};
}

int SumOf(const int8_t* q, int n) {
  int sum = 0;
  for (int j = 0; j < n; j++) sum += q[j];
  return sum;
}

// q8_0 (fp16 d, s = d * sum) or, with q8_1, s = fp16(d_exact * sum).
void QuantizeQ8RowsRef(const float* x, void* xq, int in_dim, RowRange tokens, bool q8_1) {
  for (int t = tokens.begin; t < tokens.end; t++) {
    const float* in = x + static_cast<int64_t>(t) * in_dim;  // [in_dim]
    const Q8RowFields f = RowFields(xq, in_dim, t);
    for (int b = 0; b < in_dim / kQ8ActBlock; b++) {
      int8_t* q = f.qs + kQ8ActBlock * b;
      float d_exact = 0.0f;
      f.d[b] = QuantizeBlockQ8_0Ref(in + kQ8ActBlock * b, q, &d_exact);
      const int sum = SumOf(q, kQ8ActBlock);
      f.s[b] = q8_1 ? Fp16ToFp32(Fp32ToFp16(d_exact * static_cast<float>(sum)))
                    : f.d[b] * static_cast<float>(sum);
      f.qsums[b] = sum;
    }
  }
}

}  // namespace

void QuantizeQ8ActRef(const float* x, void* xq, int in_dim, RowRange tokens) {
  QuantizeQ8RowsRef(x, xq, in_dim, tokens, /*q8_1=*/false);
}

void QuantizeQ8_1ActRef(const float* x, void* xq, int in_dim, RowRange tokens) {
  QuantizeQ8RowsRef(x, xq, in_dim, tokens, /*q8_1=*/true);
}

void QuantizeQ8KActRef(const float* x, void* xq, int in_dim, RowRange tokens) {
  constexpr int kSuper = 256;
  for (int t = tokens.begin; t < tokens.end; t++) {
    const float* in = x + static_cast<int64_t>(t) * in_dim;  // [in_dim]
    const Q8RowFields f = RowFields(xq, in_dim, t);
    for (int sb = 0; sb < in_dim / kSuper; sb++) {
      const float* v = in + kSuper * sb;
      int8_t* q = f.qs + kSuper * sb;
      float amax = 0.0f, max = 0.0f;  // the first element of largest magnitude, with its sign
      for (int j = 0; j < kSuper; j++) {
        const float ax = std::fabs(v[j]);
        if (ax > amax) {
          amax = ax;
          max = v[j];
        }
      }
      const float iscale = amax != 0.0f ? -127.0f / max : 0.0f;
      for (int j = 0; j < kSuper; j++) {
        q[j] = static_cast<int8_t>(std::min(127, static_cast<int>(std::nearbyint(iscale * v[j]))));
      }
      const float d = amax != 0.0f ? 1.0f / iscale : 0.0f;
      auto* sums16 = reinterpret_cast<int16_t*>(f.qsums);  // kQ8K: a sum per 16 (q8_act.h)
      for (int b = sb * kSuper / kQ8ActBlock; b < (sb + 1) * kSuper / kQ8ActBlock; b++) {
        const int lo = SumOf(f.qs + kQ8ActBlock * b, 16),
                  hi = SumOf(f.qs + kQ8ActBlock * b + 16, 16);
        f.d[b] = d;
        f.s[b] = d * static_cast<float>(lo + hi);
        sums16[2 * b] = static_cast<int16_t>(lo);
        sums16[2 * b + 1] = static_cast<int16_t>(hi);
      }
    }
  }
}

void MatmulQ8_0Q8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulQ8Act<BlockQ8_0>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulQ4_0Q8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulQ8Act<BlockQ4_0>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulQ5_0Q8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulQ8Act<BlockQ5_0>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulIQ4_NLQ8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                          int out_dim, RowRange rows) {
  MatmulQ8Act<BlockIQ4_NL>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulMXFP4Q8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                         int out_dim, RowRange rows) {
  MatmulQ8Act<BlockMXFP4>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulQ4_KQ8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulKQ8Act<BlockQ4_K>(w, xq, y, n_tokens, in_dim, out_dim, rows, ScaleMinStep<BlockQ4_K>);
}

void MatmulQ5_KQ8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulKQ8Act<BlockQ5_K>(w, xq, y, n_tokens, in_dim, out_dim, rows, ScaleMinStep<BlockQ5_K>);
}

void MatmulQ6_KQ8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  const auto step = [](const BlockQ6_K& blk, int b32, const int8_t* x, float dx, float, float val) {
    const int isum = ScaledBlockDot(blk, b32, x);
    return std::fmaf(static_cast<float>(isum), Fp16ToFp32(blk.d) * dx, val);
  };
  MatmulKQ8Act<BlockQ6_K>(w, xq, y, n_tokens, in_dim, out_dim, rows, step);
}

void MatmulIQ4_XSQ8ActRef(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                          int out_dim, RowRange rows) {
  const auto step = [](const BlockIQ4_XS& blk, int j, const int8_t* x, float dx, float, float val) {
    return std::fmaf(static_cast<float>(ScaledBlockDot(blk, j, x)), Fp16ToFp32(blk.d) * dx, val);
  };
  MatmulKQ8Act<BlockIQ4_XS>(w, xq, y, n_tokens, in_dim, out_dim, rows, step);
}

void PackQ8ActOctetsRef(const void* xq, void* octets, int n_dim, int n_tokens, int first,
                        int last) {
  const int nb = n_dim / 32;
  for (int o = first; o < last; o++) {
    const auto [q, d, s, c] = Q8ActOctetOutOf(octets, n_dim, o);
    for (int j = 0; j < kQ8ActOctet; j++) {
      const int t = o * kQ8ActOctet + j;
      if (t >= n_tokens) {
        for (int b = 0; b < nb; b++) {
          for (int k = 0; k < 8; k++) q[(b * 8 + k) * kQ8ActOctet + j] = 0;
          d[b * kQ8ActOctet + j] = 0;
          s[b * kQ8ActOctet + j] = 0;
          c[b * kQ8ActOctet + j] = 0;
        }
        continue;
      }
      const void* row = static_cast<const uint8_t*>(xq) + Q8ActRowBytes(n_dim) * t;
      const int8_t* qs = Q8ActQuants(row);
      const float* rd = Q8ActScales(row, n_dim);
      const float* rs = Q8ActSums(row, n_dim);
      const int32_t* rq = Q8ActQuantSums(row, n_dim);
      for (int b = 0; b < nb; b++) {
        for (int k = 0; k < 8; k++) {
          std::memcpy(&q[(b * 8 + k) * kQ8ActOctet + j], qs + 32 * b + 4 * k, 4);
        }
        d[b * kQ8ActOctet + j] = rd[b];
        s[b * kQ8ActOctet + j] = rs[b];
        c[b * kQ8ActOctet + j] = -128 * rq[b];
      }
    }
  }
}

}  // namespace smallmind::kernels
