// AVX2 matmuls over Q8 activations with Q8_0 / Q4_0 weights repacked 8 rows at a
// time, so one 256-bit register holds 4 consecutive quants of each of 8 rows: a maddubs against 4
// activation quants broadcast to every lane advances 8 rows at once, and each lane ends a block
// holding its row's exact integer block dot product (no horizontal sums). Per block and row the
// float accumulator gets fma(isum, dw * dx) (Q4_0 also fma(-8 dw, s); Q4_1 and Q5_1, packed as
// Q4_1x8 and Q8_1x8 over kQ8_1 rows, fma(m, s)): one lane per row, blocks in order. Tiles (G groups
// x T tokens: 1 x 8 in prefill and batched decode, 2 x 4 for 4-7 tokens left, 2 x 2 or 2 x 3 for
// the last 2-3, 4 x 1 for a last one and single-stream decode) only share registers and loads
// between lanes, so every tile shape gives a (token, row) the same bits: both the deterministic and
// the parallel path use these kernels. The packed layouts, the float steps and the tile shapes are
// in q8_0x8.h (shared with the VNNI kernels); this file has the maddubs integer core and the
// packing.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/low_bit_blocks.h"
#include "kernels/q8_act.h"
#include "kernels/quant_blocks.h"
#include "kernels/ref/dequant_ref.h"
#include "kernels/x86/q8_0x8.h"
#include "kernels/x86/q8_rows.h"

namespace smallmind::kernels::avx2 {
namespace {

// The maddubs integer core: block b of G packed groups against T activation rows, isum[g][t]
// lane r = the sum of group g's row r's 32 quants (Q4_0: the raw nibble, the -8 is applied in
// Accumulate) times token t's. maddubs wants one unsigned side: Q4_0's nibbles are, Q8_0 takes
// |w| and moves w's sign onto x. Neither int16 step saturates (comments below), so the sums are
// exact and the tile shape cannot change them.
//
// On Zen 3 vpsignb, vpmaddubsw and vpmaddwd share the two vector-multiply pipes (2 a cycle
// each, 2.77 a cycle mixed 6:2 with vpaddd), so a Q8_0 step costs 3 of their slots per 32
// multiply-adds. Tried in session 16 and not kept (numbers in its closing note): int16 vpmaddwd
// on weights repacked as row pairs with pre-widened activations (2 slots; 3-8% faster batched
// decode steps in one process, A/B alternating steps, but single-stream decode 2-4% slower and
// a second layout), and int16 vpmaddwd on this layout (a vphaddd + vpermq per block: 13-39%
// slower); prefetchnta for batched weights changed nothing.
struct MaddubsDots {
  // Q4_0 and Q4_1 nibbles.
  template <int G, int T, class XA, typename Nibbles>
  requires std::is_same_v<Nibbles, Q4_0x8> || std::is_same_v<Nibbles, Q4_1x8>
  static void Run(const Nibbles* const* grp, const XA& x, int b, __m256i (*isum)[T]) {
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    __m256i acc16[G][T];  // int16 pairs; 8 maddubs of nibbles (<= 15) x quants (|q| <= 127) fit
    for (int g = 0; g < G; g++) {
      for (int t = 0; t < T; t++) acc16[g][t] = _mm256_setzero_si256();
    }
#pragma GCC unroll 4
    for (int m = 0; m < 4; m++) {
      for (int g = 0; g < G; g++) {  // one group's nibbles at a time: 2 registers, not 2 G
        const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(grp[g][b].qs[m]));
        const __m256i lo = _mm256_and_si256(w, low4);
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(w, 4), low4);
        for (int t = 0; t < T; t++) {  // broadcasts are loads: repeating them per group is cheap
          const __m256i xl = Broadcast4(x.Quad(b, m, t)), xh = Broadcast4(x.Quad(b, m + 4, t));
          acc16[g][t] = _mm256_add_epi16(acc16[g][t], _mm256_maddubs_epi16(lo, xl));
          acc16[g][t] = _mm256_add_epi16(acc16[g][t], _mm256_maddubs_epi16(hi, xh));
        }
      }
      Fence<G, T>(acc16);
    }
    const __m256i ones = _mm256_set1_epi16(1);
    for (int g = 0; g < G; g++) {
      for (int t = 0; t < T; t++) isum[g][t] = _mm256_madd_epi16(acc16[g][t], ones);
    }
  }

  // IQ4_NL and MXFP4 codes: each nibble looked up in the type's levels by a byte shuffle, then
  // Q8_0's sign trick (|level| <= 127 unsigned, its sign moved onto x). MXFP4's levels (|l| <= 12)
  // let the low and high nibbles' int16 pairs add before the widening (2 * 2 * 12 * 127 fits
  // int16); IQ4_NL's (127) do not. Tried, not kept (Zen 1, decode_bench tg64 bench-1B MXFP4, 2
  // threads): MXFP4 looked up as level + 12, unsigned, maddubs on it as Q4_0 does and 12 dw s
  // taken off in Accumulate: 29.1 vs 28.3 tok/s (noise-sized), and its float steps would no
  // longer give the bits of the VNNI / AMX tables' widened Q8_0 kernels.
  template <int G, int T, class XA, typename Lut>
  requires kIsLut4x8<Lut>
  static void Run(const Lut* const* grp, const XA& x, int b, __m256i (*isum)[T]) {
    const __m256i low4 = _mm256_set1_epi8(0x0f), ones = _mm256_set1_epi16(1);
    const __m256i levels = _mm256_broadcastsi128_si256(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(Lut::kLevels)));
    for (int g = 0; g < G; g++) {
      for (int t = 0; t < T; t++) isum[g][t] = _mm256_setzero_si256();
    }
#pragma GCC unroll 4
    for (int m = 0; m < 4; m++) {
      for (int g = 0; g < G; g++) {
        const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(grp[g][b].qs[m]));
        const __m256i lo = _mm256_shuffle_epi8(levels, _mm256_and_si256(w, low4));
        const __m256i hi =
            _mm256_shuffle_epi8(levels, _mm256_and_si256(_mm256_srli_epi16(w, 4), low4));
        const __m256i abs_lo = _mm256_abs_epi8(lo), abs_hi = _mm256_abs_epi8(hi);
        for (int t = 0; t < T; t++) {
          const __m256i xl = Broadcast4(x.Quad(b, m, t)), xh = Broadcast4(x.Quad(b, m + 4, t));
          const __m256i pl = _mm256_maddubs_epi16(abs_lo, _mm256_sign_epi8(xl, lo));
          const __m256i ph = _mm256_maddubs_epi16(abs_hi, _mm256_sign_epi8(xh, hi));
          if constexpr (4 * Lut::kMaxLevel * 127 < 32768) {
            isum[g][t] =
                _mm256_add_epi32(isum[g][t], _mm256_madd_epi16(_mm256_add_epi16(pl, ph), ones));
          } else {
            isum[g][t] = _mm256_add_epi32(
                isum[g][t],
                _mm256_add_epi32(_mm256_madd_epi16(pl, ones), _mm256_madd_epi16(ph, ones)));
          }
        }
      }
      Fence<G, T>(isum);
    }
  }

  // Q8_0 and Q5_1's widened quants (Q8_1x8, 0..31).
  template <int G, int T, class XA, typename Bytes>
  requires std::is_same_v<Bytes, Q8_0x8> || std::is_same_v<Bytes, Q8_1x8>
  static void Run(const Bytes* const* grp, const XA& x, int b, __m256i (*isum)[T]) {
    const __m256i ones = _mm256_set1_epi16(1);
    for (int g = 0; g < G; g++) {
      for (int t = 0; t < T; t++) isum[g][t] = _mm256_setzero_si256();
    }
#pragma GCC unroll 8
    for (int m = 0; m < 8; m++) {
      __m256i abs_w[G];  // |w| <= 128 times |x| <= 127, two per int16: fits
      for (int g = 0; g < G; g++) {
        abs_w[g] =
            _mm256_abs_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(grp[g][b].qs[m])));
      }
      for (int t = 0; t < T; t++) {  // each broadcast serves the G groups
        const __m256i xb = Broadcast4(x.Quad(b, m, t));
        for (int g = 0; g < G; g++) {
          // w as a memory operand of the sign: no register, one fused load per use.
          const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(grp[g][b].qs[m]));
          const __m256i p =
              _mm256_madd_epi16(_mm256_maddubs_epi16(abs_w[g], _mm256_sign_epi8(xb, w)), ones);
          isum[g][t] = _mm256_add_epi32(isum[g][t], p);
        }
      }
      Fence<G, T>(isum);
    }
  }
};

template <int kRows = kRowGroup>
size_t GroupsOf(int rows) {
  return static_cast<size_t>((rows + kRows - 1) / kRows);
}

// A source block as the block the packed layout copies: Q8_0 and Q4_0 as they are; Q5_0 and
// IQ4_NL widened to the Q8_0 block of the same values (Q5_0's q - 16 in -16..15, IQ4_NL's levels
// in -127..113, the same fp16 d). A Q8_0 kernel on the widened block computes the same exact
// block dot product and the same float steps, (dw * dx) * isum, as llama.cpp's q5_0 / iq4_nl
// vec_dot over q8_0 activations (and as MatmulQ5_0Q8ActRef / MatmulIQ4_NLQ8ActRef), at 34 bytes
// a block read instead of 22 / 18.
const BlockQ8_0& Widened(const BlockQ8_0& b) { return b; }
const BlockQ4_0& Widened(const BlockQ4_0& b) { return b; }
BlockQ8_0 Widened(const BlockQ5_0& b) {
  BlockQ8_0 w;
  w.d = b.d;
  for (int j = 0; j < kQk8_0; j++) w.qs[j] = static_cast<int8_t>(Q5_0Quant(b, j));
  return w;
}
BlockQ8_0 Widened(const BlockIQ4_NL& b) {
  BlockQ8_0 w;
  w.d = b.d;
  for (int j = 0; j < kQk8_0 / 2; j++) {
    w.qs[j] = kIq4NlValues[b.qs[j] & 0x0f];
    w.qs[j + kQk8_0 / 2] = kIq4NlValues[b.qs[j] >> 4];
  }
  return w;
}

// MXFP4 widened to Q8_0: the doubled E2M1 levels (-12..12) as quants and d = 2^(e - 128) as
// fp16, exact for e - 128 in -24..15 (fp16's powers of two); above, the surplus exponent (at
// most 3, e <= 146) moves into the quants (12 * 8 = 96 fits int8), so the block's values, its
// exact dot product and (dw * dx) * isum are again llama.cpp's vec_dot_mxfp4_q8_0 ones. The
// exponents no fp16 d reaches: e < 104 (every |value| below 12 * 2^-25 = 3.6e-7) reads as zeros,
// e > 146 (values from 2^18, no trained weight) saturates at e = 146 (MXFP4Test pins both).
BlockQ8_0 Widened(const BlockMXFP4& b) {
  constexpr int kMinExp = 128 - 24, kFp16MaxExp = 128 + 15, kMaxExp = kFp16MaxExp + 3;
  BlockQ8_0 w = {};
  if (b.e < kMinExp) return w;
  const int e = std::min<int>(b.e, kMaxExp);
  const int shift = std::max(0, e - kFp16MaxExp);
  w.d = Fp32ToFp16(E8M0HalfToFp32(static_cast<uint8_t>(e - shift)));
  for (int j = 0; j < kQk8_0 / 2; j++) {
    w.qs[j] = static_cast<int8_t>(kMxfp4Values[b.qs[j] & 0x0f] * (1 << shift));
    w.qs[j + kQk8_0 / 2] = static_cast<int8_t>(kMxfp4Values[b.qs[j] >> 4] * (1 << shift));
  }
  return w;
}

// Q4_1 as it is; Q5_1 widened to its quants as bytes (0..31) with the same fp16 d and m: the
// Q8_1x8 block's source. The maddubs core's exact block dot product and Accumulate's float steps
// are then MatmulQ4_1Q8ActRef's / MatmulQ5_1Q8ActRef's.
const BlockQ4_1& Widened(const BlockQ4_1& b) { return b; }
struct WidenedQ5_1 {
  uint16_t d, m;
  int8_t qs[kQk8_0];
};
WidenedQ5_1 Widened(const BlockQ5_1& b) {
  WidenedQ5_1 w;
  w.d = b.d;
  w.m = b.m;
  for (int j = 0; j < kQk8_0; j++) w.qs[j] = static_cast<int8_t>(Q5_1Quant(b, j));
  return w;
}

// A source block as the packers read it: Widened's (Q8_0's layout, Q4_0 / Q4_1 as they are, Q5_1's
// bytes).
struct AsWidened {
  template <typename Source>
  decltype(auto) operator()(const Source& s) const {
    return Widened(s);
  }
};

// Groups of kRows rows: block b of group g holds each row's scale (and min) and its quants 4 at a
// time, of the blocks as `Read` gives them.
template <typename Source, typename Packed, int kSteps, int kRows = kRowGroup,
          class Read = AsWidened>
void Pack(const void* src, void* dst, int rows, int cols) {
  const int n_blocks = cols / 32;
  const auto* in = static_cast<const Source*>(src);
  auto* out = static_cast<Packed*>(dst);
  std::memset(dst, 0, GroupsOf<kRows>(rows) * n_blocks * sizeof(Packed));  // padding rows: zeros
  for (int r = 0; r < rows; r++) {
    const int g = r / kRows, lane = r % kRows;
    for (int b = 0; b < n_blocks; b++) {
      const auto& s = Read{}(in[static_cast<int64_t>(r) * n_blocks + b]);
      Packed& p = out[static_cast<int64_t>(g) * n_blocks + b];
      p.d[lane] = s.d;
      if constexpr (requires { p.m[lane] = s.m; }) p.m[lane] = s.m;
      for (int m = 0; m < kSteps; m++) std::memcpy(&p.qs[m][4 * lane], &s.qs[4 * m], 4);
    }
  }
}

// Every packed Q8_0 quant q (padding rows' zeros too) as the uint8 q + 128.
template <typename Packed>
void OffsetQuants(void* dst, size_t n_blocks) {
  auto* blocks = static_cast<Packed*>(dst);
  for (size_t i = 0; i < n_blocks; i++) {
    for (auto& m : blocks[i].qs) {
      for (uint8_t& q : m) q ^= 0x80;
    }
  }
}

// Q8_0 packers (plain, unsigned quants, 16 rows) over Source blocks widened to Q8_0.
template <typename Source>
void PackAsQ8_0x8(const void* src, void* dst, int rows, int cols) {
  Pack<Source, Q8_0x8, 8>(src, dst, rows, cols);
}
template <typename Source>
void PackAsQ8_0x8u(const void* src, void* dst, int rows, int cols) {
  Pack<Source, Q8_0x8u, 8>(src, dst, rows, cols);
  OffsetQuants<Q8_0x8u>(dst, GroupsOf(rows) * static_cast<size_t>(cols / 32));
}
template <typename Source>
void PackAsQ8_0x16u(const void* src, void* dst, int rows, int cols) {
  constexpr int kRows = 2 * kRowGroup;
  Pack<Source, Q8_0x16u, 8, kRows>(src, dst, rows, cols);
  OffsetQuants<Q8_0x16u>(dst, GroupsOf<kRows>(rows) * static_cast<size_t>(cols / 32));
}

// IQ4_NL and MXFP4 as Lut4x8 / Lut4x16 blocks: each row's scale as a float (exact), its codes as
// Q4_0x8's nibbles.
struct LutCodes {
  float d;
  uint8_t qs[16];
};
struct AsLutCodes {
  template <typename Source>
  LutCodes operator()(const Source& s) const {
    LutCodes c;
    if constexpr (std::is_same_v<Source, BlockMXFP4>) {
      c.d = E8M0HalfToFp32(s.e);
    } else {
      c.d = Fp16ToFp32(s.d);
    }
    std::memcpy(c.qs, s.qs, sizeof(c.qs));
    return c;
  }
};
template <typename Source, typename Packed, int kRows = kRowGroup>
void PackLut(const void* src, void* dst, int rows, int cols) {
  Pack<Source, Packed, 4, kRows, AsLutCodes>(src, dst, rows, cols);
}

}  // namespace

void PackIQ4_NLx8(const void* src, void* dst, int rows, int cols) {
  PackLut<BlockIQ4_NL, IQ4_NLx8>(src, dst, rows, cols);
}
void PackMXFP4x8(const void* src, void* dst, int rows, int cols) {
  PackLut<BlockMXFP4, MXFP4x8>(src, dst, rows, cols);
}
size_t PackedLut4x8Bytes(int rows, int cols) {
  return GroupsOf(rows) * (cols / 32) * sizeof(IQ4_NLx8);
}
void PackIQ4_NLx16(const void* src, void* dst, int rows, int cols) {
  PackLut<BlockIQ4_NL, IQ4_NLx16, 2 * kRowGroup>(src, dst, rows, cols);
}
void PackMXFP4x16(const void* src, void* dst, int rows, int cols) {
  PackLut<BlockMXFP4, MXFP4x16, 2 * kRowGroup>(src, dst, rows, cols);
}
size_t PackedLut4x16Bytes(int rows, int cols) {
  return GroupsOf<2 * kRowGroup>(rows) * (cols / 32) * sizeof(IQ4_NLx16);
}
void MatmulIQ4_NLx8Q8Avx2(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                          int out_dim, RowRange rows) {
  MatmulQ8Packed<IQ4_NLx8, MaddubsDots, false>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulMXFP4x8Q8Avx2(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                         int out_dim, RowRange rows) {
  MatmulQ8Packed<MXFP4x8, MaddubsDots, false>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

PackFn WidenedQ8_0Pack(PackFn q8_0_pack, DType source) {
  struct Row {
    PackFn q8_0, q5_0, iq4_nl, mxfp4;
  };
  static constexpr Row kPacks[] = {{&PackQ8_0x8, &PackAsQ8_0x8<BlockQ5_0>,
                                    &PackAsQ8_0x8<BlockIQ4_NL>, &PackAsQ8_0x8<BlockMXFP4>},
                                   {&PackQ8_0x8u, &PackAsQ8_0x8u<BlockQ5_0>,
                                    &PackAsQ8_0x8u<BlockIQ4_NL>, &PackAsQ8_0x8u<BlockMXFP4>},
                                   {&PackQ8_0x16u, &PackAsQ8_0x16u<BlockQ5_0>,
                                    &PackAsQ8_0x16u<BlockIQ4_NL>, &PackAsQ8_0x16u<BlockMXFP4>}};
  for (const Row& row : kPacks) {
    if (row.q8_0 != q8_0_pack) continue;
    if (source == DType::kQ5_0) return row.q5_0;
    if (source == DType::kIQ4_NL) return row.iq4_nl;
    if (source == DType::kMXFP4) return row.mxfp4;
    return source == DType::kQ8_0 ? row.q8_0 : nullptr;
  }
  return nullptr;
}

void PackQ4_0x8(const void* src, void* dst, int rows, int cols) {
  Pack<BlockQ4_0, Q4_0x8, 4>(src, dst, rows, cols);
}
void PackQ8_0x8(const void* src, void* dst, int rows, int cols) {
  PackAsQ8_0x8<BlockQ8_0>(src, dst, rows, cols);
}
void PackQ8_0x8u(const void* src, void* dst, int rows, int cols) {
  PackAsQ8_0x8u<BlockQ8_0>(src, dst, rows, cols);
}
void PackQ8_0x16u(const void* src, void* dst, int rows, int cols) {
  PackAsQ8_0x16u<BlockQ8_0>(src, dst, rows, cols);
}
void PackQ4_0x16(const void* src, void* dst, int rows, int cols) {
  Pack<BlockQ4_0, Q4_0x16, 4, 2 * kRowGroup>(src, dst, rows, cols);
}
void PackQ4_1x8(const void* src, void* dst, int rows, int cols) {
  Pack<BlockQ4_1, Q4_1x8, 4>(src, dst, rows, cols);
}
void PackQ5_1AsQ8_1x8(const void* src, void* dst, int rows, int cols) {
  Pack<BlockQ5_1, Q8_1x8, 8>(src, dst, rows, cols);
}
size_t PackedQ4_1x8Bytes(int rows, int cols) {
  return GroupsOf(rows) * (cols / 32) * sizeof(Q4_1x8);
}
size_t PackedQ8_1x8Bytes(int rows, int cols) {
  return GroupsOf(rows) * (cols / 32) * sizeof(Q8_1x8);
}
size_t PackedQ4_0x16Bytes(int rows, int cols) {
  return GroupsOf<2 * kRowGroup>(rows) * (cols / 32) * sizeof(Q4_0x16);
}
size_t PackedQ8_0x16uBytes(int rows, int cols) {
  return GroupsOf<2 * kRowGroup>(rows) * (cols / 32) * sizeof(Q8_0x16u);
}
size_t PackedQ4_0x8Bytes(int rows, int cols) {
  return GroupsOf(rows) * (cols / 32) * sizeof(Q4_0x8);
}
size_t PackedQ8_0x8Bytes(int rows, int cols) {
  return GroupsOf(rows) * (cols / 32) * sizeof(Q8_0x8);
}
size_t PackedQ8_0x8uBytes(int rows, int cols) {
  return GroupsOf(rows) * (cols / 32) * sizeof(Q8_0x8u);
}

void MatmulQ4_0x8Q8Avx2(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulQ8Packed<Q4_0x8, MaddubsDots, false>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulQ8_0x8Q8Avx2(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulQ8Packed<Q8_0x8, MaddubsDots, false>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulQ4_1x8Q8Avx2(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulQ8Packed<Q4_1x8, MaddubsDots, false>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulQ8_1x8Q8Avx2(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulQ8Packed<Q8_1x8, MaddubsDots, false>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

namespace {

// The kQ8 rows (q8_1: the kQ8_1 rows) of `tokens`: bitwise QuantizeQ8ActRef (QuantizeQ8_1ActRef).
void QuantizeRows(const float* x, void* xq, int in_dim, RowRange tokens, bool q8_1) {
  const size_t row_bytes = Q8ActRowBytes(in_dim);
  for (int t = tokens.begin; t < tokens.end; t++) {
    const float* in = x + static_cast<int64_t>(t) * in_dim;  // [in_dim]
    auto* row = static_cast<uint8_t*>(xq) + row_bytes * t;
    auto* qs = reinterpret_cast<int8_t*>(row);                     // [in_dim]
    auto* d = reinterpret_cast<float*>(row + in_dim);              // [in_dim / 32]
    float* sums = d + in_dim / 32;                                 // [in_dim / 32]
    auto* qsums = reinterpret_cast<int32_t*>(sums + in_dim / 32);  // [in_dim / 32]
    for (int b = 0; b < in_dim / 32; b++) {
      int sum = 0;
      float d_exact = 0.0f;
      d[b] = QuantizeBlockQ8_0(in + 32 * b, qs + 32 * b, &sum, &d_exact);
      sums[b] =
          q8_1 ? RoundToHalf(d_exact * static_cast<float>(sum)) : d[b] * static_cast<float>(sum);
      qsums[b] = sum;
    }
  }
}

}  // namespace

void QuantizeQ8Avx2(const float* x, void* xq, int in_dim, RowRange tokens) {
  QuantizeRows(x, xq, in_dim, tokens, /*q8_1=*/false);
}

void QuantizeQ8_1Avx2(const float* x, void* xq, int in_dim, RowRange tokens) {
  QuantizeRows(x, xq, in_dim, tokens, /*q8_1=*/true);
}

}  // namespace smallmind::kernels::avx2
