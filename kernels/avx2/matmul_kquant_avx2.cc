// AVX2 matmuls of Q4_K / Q5_K / Q6_K / IQ4_XS / Q2_K weights (Q3_K: widened to Q6_K) over Q8
// activations (both paths), the K-quant siblings of matmul_q8_avx2.cc: weights repacked 8 rows at a
// time so one 256-bit register holds 4 consecutive quants of each of 8 rows, a maddubs against 4
// activation quants broadcast to every lane advances 8 rows at once (Q6_K: |q - 32| against the
// quants with q - 32's sign), and each int32 lane ends an activation block of 32 holding its row's
// exact scaled integer dot product (the sub-block scales are applied by the madd that widens the
// int16 sums). Per block and row the one float accumulator then gets the fmas MatmulQ4_KQ8ActRef /
// MatmulQ6_KQ8ActRef state, blocks left to right: bitwise those references (Q5_K:
// MatmulQ5_KQ8ActRef). Tiles (q8_rows.h; prefill Q4_K 2 groups x 4 tokens, Q5_K and Q6_K 1 x 4;
// decode Q4_K 4 groups x 1 token, Q5_K and Q6_K 1 x 1 with software prefetch) only share loads and
// registers, so every tile shape gives a (token, row) the same bits.
//
// The packed layouts, the walks, the float steps and the tiles are in kquant_x8.h (shared
// with the VNNI kernels); this file has the maddubs core and the packing.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/q8_act.h"
#include "kernels/quant_blocks.h"
#include "kernels/ref/dequant_ref.h"
#include "kernels/ref/low_bit_ref.h"
#include "kernels/x86/kquant_x8.h"
#include "kernels/x86/q2_kx8.h"
#include "kernels/x86/q8_rows.h"

namespace smallmind::kernels::avx2 {
namespace {

// The maddubs core (kquant_x8.h): int16 pairs, widened and scaled by a madd.
struct MaddubsCore {
  // Add's int16 pairs hold the kernels' steps only for small unsigned bytes (see each kernel).
  static constexpr bool kAnyUnsigned = false;
  static __m256i Add(__m256i acc, __m256i u, __m256i s) {
    return _mm256_add_epi16(acc, _mm256_maddubs_epi16(u, s));
  }
  // sc (|sc| < 2^15) as the int16 pair (sc, sc): the madd factor of its lane.
  static __m256i Factor(__m256i sc) {
    return _mm256_blend_epi16(sc, _mm256_slli_epi32(sc, 16), 0xAA);
  }
  static __m256i Scale(__m256i acc, __m256i factor) { return _mm256_madd_epi16(acc, factor); }
  static __m256i AddWide(__m256i acc, __m256i u, __m256i s) {
    return _mm256_add_epi32(acc,
                            _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
  }
};

// ---- packing ----

size_t GroupsOf(int rows) { return static_cast<size_t>((rows + kRowGroup - 1) / kRowGroup); }

// ggml's get_scale_min_k4 (see kernels/ref/dequant_ref.cc).
void ScaleMinK4(int j, const uint8_t* q, int* scale, int* min) {
  if (j < 4) {
    *scale = q[j] & 63;
    *min = q[j + 4] & 63;
  } else {
    *scale = (q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4);
    *min = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// The fields Q4_Kx8 and Q5_Kx8 share (kquant_x8.h) from a Q4_K or Q5_K block.
template <typename Block, typename Packed>
void PackScaleMinBlock(const Block& s, int lane, Packed& p) {
  p.d[lane] = s.d;
  p.dmin[lane] = s.dmin;
  for (int j = 0; j < 8; j++) {
    int sc = 0, m = 0;
    ScaleMinK4(j, s.scales, &sc, &m);
    p.scales[j][lane] = static_cast<uint8_t>(sc | (m >> 4) << 6);
    p.mins[j / 2][lane] |= static_cast<uint8_t>((m & 15) << (4 * (j % 2)));
  }
  for (int q = 0; q < 4; q++) {
    for (int m = 0; m < 8; m++) std::memcpy(&p.qs[q][m][4 * lane], &s.qs[32 * q + 4 * m], 4);
  }
}

void PackBlock(const BlockQ4_K& s, int lane, Q4_Kx8& p) { PackScaleMinBlock(s, lane, p); }

void PackBlock(const BlockQ5_K& s, int lane, Q5_Kx8& p) {
  PackScaleMinBlock(s, lane, p);
  for (int m = 0; m < 8; m++) std::memcpy(&p.qh[m][4 * lane], &s.qh[4 * m], 4);
}

void PackBlock(const BlockIQ4_XS& s, int lane, IQ4_XSx8& p) {
  p.d[lane] = s.d;
  for (int j = 0; j < 8; j++) p.scales[j][lane] = static_cast<int8_t>(Iq4XsScale(s, j));
  for (int j = 0; j < 8; j++) {
    for (int m = 0; m < 4; m++) std::memcpy(&p.qs[j][m][4 * lane], &s.qs[16 * j + 4 * m], 4);
  }
}

void PackBlock(const BlockQ6_K& s, int lane, Q6_Kx8& p) {
  p.d[lane] = s.d;
  for (int k = 0; k < 16; k++) p.scales[k][lane] = s.scales[k];
  for (int h = 0; h < 2; h++) {
    for (int m = 0; m < 16; m++) std::memcpy(&p.ql[h][m][4 * lane], &s.ql[64 * h + 4 * m], 4);
    for (int m = 0; m < 8; m++) std::memcpy(&p.qh[h][m][4 * lane], &s.qh[32 * h + 4 * m], 4);
  }
}

// Q3_K widened exactly to Q6_K (WidenQ3_KToQ6_K: q + 32, sc - 32, the same d), so the Q6_K
// kernels of every table run it: their exact integers are Q3_K's (MatmulQ3_KQ8ActRef), at 210
// bytes read a super-block instead of 110, with no kernel of its own to keep.
void PackBlock(const BlockQ3_K& s, int lane, Q6_Kx8& p) { PackBlock(WidenQ3_KToQ6_K(s), lane, p); }

void PackBlock(const BlockQ2_K& s, int lane, Q2_Kx8& p) {
  p.d[lane] = s.d;
  p.dmin[lane] = s.dmin;
  for (int k = 0; k < 16; k++) p.scales[k][lane] = s.scales[k];
  for (int h = 0; h < 2; h++) {
    for (int m = 0; m < 8; m++) std::memcpy(&p.qs[h][m][4 * lane], &s.qs[32 * h + 4 * m], 4);
  }
}

template <typename Source, typename Packed>
void Pack(const void* src, void* dst, int rows, int cols) {
  const int n_super = cols / kQkK;
  const auto* in = static_cast<const Source*>(src);
  auto* out = static_cast<Packed*>(dst);
  std::memset(dst, 0, GroupsOf(rows) * n_super * sizeof(Packed));  // padding rows: zeros
  for (int r = 0; r < rows; r++) {
    for (int sb = 0; sb < n_super; sb++) {
      PackBlock(in[static_cast<int64_t>(r) * n_super + sb], r % kRowGroup,
                out[static_cast<int64_t>(r / kRowGroup) * n_super + sb]);
    }
  }
}

}  // namespace

void PackQ4_Kx8(const void* src, void* dst, int rows, int cols) {
  Pack<BlockQ4_K, Q4_Kx8>(src, dst, rows, cols);
}
void PackQ5_Kx8(const void* src, void* dst, int rows, int cols) {
  Pack<BlockQ5_K, Q5_Kx8>(src, dst, rows, cols);
}
void PackIQ4_XSx8(const void* src, void* dst, int rows, int cols) {
  Pack<BlockIQ4_XS, IQ4_XSx8>(src, dst, rows, cols);
}
void PackQ6_Kx8(const void* src, void* dst, int rows, int cols) {
  Pack<BlockQ6_K, Q6_Kx8>(src, dst, rows, cols);
}
void PackQ3_KAsQ6_Kx8(const void* src, void* dst, int rows, int cols) {
  Pack<BlockQ3_K, Q6_Kx8>(src, dst, rows, cols);
}
void PackQ2_Kx8(const void* src, void* dst, int rows, int cols) {
  Pack<BlockQ2_K, Q2_Kx8>(src, dst, rows, cols);
}
size_t PackedQ2_Kx8Bytes(int rows, int cols) {
  return GroupsOf(rows) * (cols / kQkK) * sizeof(Q2_Kx8);
}
size_t PackedQ4_Kx8Bytes(int rows, int cols) {
  return GroupsOf(rows) * (cols / kQkK) * sizeof(Q4_Kx8);
}
size_t PackedQ5_Kx8Bytes(int rows, int cols) {
  return GroupsOf(rows) * (cols / kQkK) * sizeof(Q5_Kx8);
}
size_t PackedIQ4_XSx8Bytes(int rows, int cols) {
  return GroupsOf(rows) * (cols / kQkK) * sizeof(IQ4_XSx8);
}
size_t PackedQ6_Kx8Bytes(int rows, int cols) {
  return GroupsOf(rows) * (cols / kQkK) * sizeof(Q6_Kx8);
}

void MatmulQ4_Kx8Q8Avx2(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulKQuantPacked<Q4_Kx8, MaddubsCore>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulQ5_Kx8Q8Avx2(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulKQuantPacked<Q5_Kx8, MaddubsCore>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulIQ4_XSx8Q8Avx2(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                          int out_dim, RowRange rows) {
  MatmulKQuantPacked<IQ4_XSx8, MaddubsCore>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulQ6_Kx8Q8Avx2(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulKQuantPacked<Q6_Kx8, MaddubsCore>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulQ2_Kx8Q8Avx2(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulKQuantPacked<Q2_Kx8, MaddubsCore>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

}  // namespace smallmind::kernels::avx2
