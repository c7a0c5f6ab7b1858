// Parallel-path AVX2 matmuls over Q8 activations with Q8_0 / Q4_0 weights repacked 8 rows at a
// time, so one 256-bit register holds 4 consecutive quants of each of 8 rows: a maddubs against 4
// activation quants broadcast to every lane advances 8 rows at once, and each lane ends a block
// holding its row's exact integer block dot product (no horizontal sums). Per block and row the
// float accumulator gets fma(isum, dw * dx) (Q4_0 also fma(-8 dw, s)): one lane per row, blocks
// in order.
//
// Packed layout, groups of 8 rows (the last group zero-padded), group-major then block-major:
//   Q4_0x8 block (144 B): uint16 d[8] (row r's fp16 scale), uint8 qs[4][32] with
//     qs[m][4r + i] = row r's qs[4m + i]: low nibbles = elements 4m + i, high = 16 + 4m + i.
//   Q8_0x8 block (272 B): uint16 d[8], int8 qs[8][32] with qs[m][4r + i] = row r's qs[4m + i].
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/avx2/avx2_kernels.h"
#include "kernels/avx2/avx2_util.h"
#include "kernels/q8_act.h"
#include "kernels/quant_blocks.h"

namespace smallmind::kernels::avx2 {
namespace {

constexpr int kGroup = 8;  // rows per packed group: the 8 int32 lanes of a register

struct Q4_0x8 {
  uint16_t d[kGroup];
  uint8_t qs[4][32];
};
struct Q8_0x8 {
  uint16_t d[kGroup];
  int8_t qs[8][32];
};
static_assert(sizeof(Q4_0x8) == 144 && sizeof(Q8_0x8) == 272);

// One Q8 activation row, its quants, scales and block sums.
struct XRow {
  const int8_t* qs;  // [in_dim]
  const float* d;    // [in_dim / 32]
  const float* s;    // [in_dim / 32] d * sum of the block's quants
};

inline XRow MakeXRow(const void* xq, int in_dim, int t) {
  const void* row = static_cast<const uint8_t*>(xq) + Q8ActRowBytes(in_dim) * t;
  return XRow{Q8ActQuants(row), Q8ActScales(row, in_dim), Q8ActSums(row, in_dim)};
}

inline __m256i Broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// Integer block dot products of one packed block against T activation rows: isum[t] lane r =
// sum of row r's 32 quants (Q4_0: the raw nibble, the -8 is applied in Accumulate) times token
// t's.
template <int T>
inline void BlockDots(const Q4_0x8& blk, const XRow* x, int b, __m256i* isum) {
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  __m256i acc16[T];  // int16 pairs; 8 maddubs of nibbles (<= 15) x quants (|q| <= 127) fit
  for (int t = 0; t < T; t++) acc16[t] = _mm256_setzero_si256();
  // Not unrolled: unrolled, GCC hoists all 8 T maddubs ahead of their adds and spills them.
#pragma GCC unroll 1
  for (int m = 0; m < 4; m++) {
    const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qs[m]));
    const __m256i lo = _mm256_and_si256(w, low4);
    const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(w, 4), low4);
    for (int t = 0; t < T; t++) {
      const int8_t* q = x[t].qs + 32 * b;
      acc16[t] = _mm256_add_epi16(acc16[t], _mm256_maddubs_epi16(lo, Broadcast4(q + 4 * m)));
      acc16[t] = _mm256_add_epi16(acc16[t], _mm256_maddubs_epi16(hi, Broadcast4(q + 16 + 4 * m)));
    }
  }
  const __m256i ones = _mm256_set1_epi16(1);
  for (int t = 0; t < T; t++) isum[t] = _mm256_madd_epi16(acc16[t], ones);
}

// acc[t] += isum[t] * dw * dx (+ the Q4_0 offset -8 * dw * s).
template <int T>
inline void Accumulate(const Q4_0x8&, __m256 dw, const __m256i* isum, const XRow* x, int b,
                       __m256* acc) {
  const __m256 dw8 = _mm256_mul_ps(dw, _mm256_set1_ps(-8.0f));
  for (int t = 0; t < T; t++) {
    const __m256 scale = _mm256_mul_ps(dw, _mm256_set1_ps(x[t].d[b]));
    acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[t]), scale, acc[t]);
    acc[t] = _mm256_fmadd_ps(dw8, _mm256_set1_ps(x[t].s[b]), acc[t]);
  }
}
template <int T>
inline void Accumulate(const Q8_0x8&, __m256 dw, const __m256i* isum, const XRow* x, int b,
                       __m256* acc) {
  for (int t = 0; t < T; t++) {
    const __m256 scale = _mm256_mul_ps(dw, _mm256_set1_ps(x[t].d[b]));
    acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[t]), scale, acc[t]);
  }
}

template <int T>
inline void BlockDots(const Q8_0x8& blk, const XRow* x, int b, __m256i* isum) {
  const __m256i ones = _mm256_set1_epi16(1);
  for (int t = 0; t < T; t++) isum[t] = _mm256_setzero_si256();
#pragma GCC unroll 1
  for (int m = 0; m < 8; m++) {
    const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qs[m]));
    const __m256i abs_w = _mm256_sign_epi8(w, w);  // maddubs wants one unsigned side
    for (int t = 0; t < T; t++) {
      const __m256i xs = _mm256_sign_epi8(Broadcast4(x[t].qs + 32 * b + 4 * m), w);
      const __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(abs_w, xs), ones);
      isum[t] = _mm256_add_epi32(isum[t], p);
    }
  }
}

// Rows of group `g` (those inside `rows`) for tokens [t0, t0 + T).
template <typename Packed, int T>
void GroupTile(const Packed* group, int n_blocks, const XRow* x, int g, RowRange rows, int t0,
               int out_dim, float* y) {
  __m256 acc[T];
  for (int t = 0; t < T; t++) acc[t] = _mm256_setzero_ps();
  for (int b = 0; b < n_blocks; b++) {
    const Packed& blk = group[b];
    __m256i isum[T];
    BlockDots<T>(blk, x, b, isum);
    const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk.d)));
    Accumulate<T>(blk, dw, isum, x, b, acc);
  }
  const int r0 = g * kGroup;
  const int lo = std::max(rows.begin, r0), hi = std::min(rows.end, r0 + kGroup);
  for (int t = 0; t < T; t++) {
    float* out = y + static_cast<int64_t>(t0 + t) * out_dim + r0;
    if (lo == r0 && hi == r0 + kGroup) {
      _mm256_storeu_ps(out, acc[t]);
    } else {
      alignas(32) float lanes[kGroup];
      _mm256_store_ps(lanes, acc[t]);
      for (int r = lo; r < hi; r++) out[r - r0] = lanes[r - r0];
    }
  }
}

template <typename Packed>
void MatmulPacked(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                  RowRange rows) {
  const int n_blocks = in_dim / 32;
  const auto* packed = static_cast<const Packed*>(w);
  for (int g = rows.begin / kGroup; g * kGroup < rows.end; g++) {
    const Packed* group = packed + static_cast<int64_t>(g) * n_blocks;
    int t = 0;
    for (; t + 4 <= n_tokens; t += 4) {  // prefill: 4 tokens share each unpacked weight register
      const XRow x[4] = {MakeXRow(xq, in_dim, t), MakeXRow(xq, in_dim, t + 1),
                         MakeXRow(xq, in_dim, t + 2), MakeXRow(xq, in_dim, t + 3)};
      GroupTile<Packed, 4>(group, n_blocks, x, g, rows, t, out_dim, y);
    }
    for (; t < n_tokens; t++) {
      const XRow x = MakeXRow(xq, in_dim, t);
      GroupTile<Packed, 1>(group, n_blocks, &x, g, rows, t, out_dim, y);
    }
  }
}

size_t GroupsOf(int rows) { return static_cast<size_t>((rows + kGroup - 1) / kGroup); }

template <typename Source, typename Packed, int kSteps>
void Pack(const void* src, void* dst, int rows, int cols) {
  const int n_blocks = cols / 32;
  const auto* in = static_cast<const Source*>(src);
  auto* out = static_cast<Packed*>(dst);
  std::memset(dst, 0, GroupsOf(rows) * n_blocks * sizeof(Packed));  // padding rows: zeros
  for (int r = 0; r < rows; r++) {
    const int g = r / kGroup, lane = r % kGroup;
    for (int b = 0; b < n_blocks; b++) {
      const Source& s = in[static_cast<int64_t>(r) * n_blocks + b];
      Packed& p = out[static_cast<int64_t>(g) * n_blocks + b];
      p.d[lane] = s.d;
      for (int m = 0; m < kSteps; m++) std::memcpy(&p.qs[m][4 * lane], &s.qs[4 * m], 4);
    }
  }
}

}  // namespace

void PackQ4_0x8(const void* src, void* dst, int rows, int cols) {
  Pack<BlockQ4_0, Q4_0x8, 4>(src, dst, rows, cols);
}
void PackQ8_0x8(const void* src, void* dst, int rows, int cols) {
  Pack<BlockQ8_0, Q8_0x8, 8>(src, dst, rows, cols);
}
size_t PackedQ4_0x8Bytes(int rows, int cols) {
  return GroupsOf(rows) * (cols / 32) * sizeof(Q4_0x8);
}
size_t PackedQ8_0x8Bytes(int rows, int cols) {
  return GroupsOf(rows) * (cols / 32) * sizeof(Q8_0x8);
}

void MatmulQ4_0x8Q8Avx2(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulPacked<Q4_0x8>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulQ8_0x8Q8Avx2(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulPacked<Q8_0x8>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

void QuantizeQ8Avx2(const float* x, void* xq, int in_dim, RowRange tokens) {
  const size_t row_bytes = Q8ActRowBytes(in_dim);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (int t = tokens.begin; t < tokens.end; t++) {
    const float* in = x + static_cast<int64_t>(t) * in_dim;  // [in_dim]
    auto* row = static_cast<uint8_t*>(xq) + row_bytes * t;
    auto* qs = reinterpret_cast<int8_t*>(row);         // [in_dim]
    auto* d = reinterpret_cast<float*>(row + in_dim);  // [in_dim / 32]
    float* sums = d + in_dim / 32;                     // [in_dim / 32]
    for (int b = 0; b < in_dim / 32; b++) {
      __m256 v[4];
      __m256 amax = _mm256_setzero_ps();
      for (int g = 0; g < 4; g++) {
        v[g] = _mm256_loadu_ps(in + 32 * b + 8 * g);
        amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign, v[g]));
      }
      __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
      m = _mm_max_ps(m, _mm_movehl_ps(m, m));
      m = _mm_max_ss(m, _mm_movehdup_ps(m));
      const float db = _mm_cvtss_f32(m) / 127.0f;
      const __m256 id = _mm256_set1_ps(db != 0.0f ? 1.0f / db : 0.0f);
      __m256i q[4];
      for (int g = 0; g < 4; g++) {
        q[g] = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v[g], id),
                                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      }
      const __m256i sum4 =
          _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3]));
      __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(sum4), _mm256_extracti128_si256(sum4, 1));
      s4 = _mm_hadd_epi32(s4, s4);
      s4 = _mm_hadd_epi32(s4, s4);
      const __m256i p =
          _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs + 32 * b),
                          _mm256_permutevar8x32_epi32(p, order));
      d[b] = db;
      sums[b] = db * static_cast<float>(_mm_cvtsi128_si32(s4));
    }
  }
}

}  // namespace smallmind::kernels::avx2
