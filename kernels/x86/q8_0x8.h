// The Q8_0 / Q4_0 packed-row matmuls over Q8 activations, less their integer core: the packed
// layouts, the per-block float steps, the tile kernel and the tile shapes. matmul_q8_avx2.cc
// instantiates them with maddubs block dot products, kernels/avx512/matmul_avx512.cc and
// kernels/avx_vnni/matmul_avx_vnni.cc with VNNI ones (vnni_cores.h); all the cores give the
// same exact integers, so all give the same bits. Included only by files built with AVX2 (or
// more) enabled. Pure inline functions and templates; thread-safe.
//
// Packed layout, groups of 8 rows (the last group zero-padded), group-major then block-major:
//   Q4_0x8 block (144 B): uint16 d[8] (row r's fp16 scale), uint8 qs[4][32] with
//     qs[m][4r + i] = row r's qs[4m + i]: low nibbles = elements 4m + i, high = 16 + 4m + i.
//   Q8_0x8 block (272 B): uint16 d[8], int8 qs[8][32] with qs[m][4r + i] = row r's qs[4m + i].
//   Q8_0x8u block (272 B): Q8_0x8 with each quant stored as the uint8 q + 128, the unsigned side
//     of the VNNI cores' u8 x s8 dot products (the activations stay signed; the core takes 128 *
//     the activation block's quant sum back off, exactly).
//   Q8_0x16u block (544 B), groups of 16 rows (the 512-bit and AMX kernels'): uint16 d[16],
//     uint8 qs[8][64] with qs[m][4r + i] = row r's qs[4m + i] + 128: one 512-bit register of 16
//     rows' 4-quant pairs, an AMX B tile of 16 columns as it lies, and its two 32-byte halves each
//     a Q8_0x8u row m of rows 0-7 and 8-15.
//   Q4_0x16 block (288 B), groups of 16 rows (the 512-bit kernels'): uint16 d[16], uint8
//     qs[4][64] with qs[m][4r + i] = row r's qs[4m + i]: Q4_0x8's bytes for 16 rows.
//   Q4_1x8 block (160 B, the source's size): uint16 d[8], m[8] (row r's fp16 scale and min), then
//     Q4_0x8's qs of the Q4_1 nibbles.
//   Q8_1x8 block (288 B): uint16 d[8], m[8], then Q8_0x8's qs of Q5_1's quants widened to bytes
//     (0..31): Q5_1 at 288 bytes read a block of 8 rows instead of 192, for one shared maddubs
//     core with Q8_0 (no fifth-bit unpacking per token).
//   IQ4_NLx8 / MXFP4x8 block (160 B): float d[8] (row r's block scale: IQ4_NL's fp16 d, MXFP4's
//     2^(e - 128), both exact), then Q4_0x8's qs of the 4-bit codes, looked up in the type's
//     kLevels (kIq4NlValues, kMxfp4Values) by a byte shuffle: half the bytes of the same blocks
//     widened to Q8_0, and every MXFP4 exponent exact.
//   IQ4_NLx16 / MXFP4x16 block (320 B), groups of 16 rows (the 512-bit kernels'): float d[16], then
//     Q4_0x16's qs of the codes; 59% of the Q8_0x16u bytes of the same blocks widened.
#pragma once

#include <immintrin.h>

#include <array>
#include <cstdint>
#include <type_traits>

#include "kernels/partition.h"
#include "kernels/quant_blocks.h"
#include "kernels/x86/q8_rows.h"
#include "kernels/x86/x86_util.h"

namespace smallmind::kernels::SMALLMIND_X86_NS {

struct Q4_0x8 {
  uint16_t d[kRowGroup];
  uint8_t qs[4][32];
};
struct Q8_0x8 {
  uint16_t d[kRowGroup];
  int8_t qs[8][32];
};
struct Q8_0x8u {
  uint16_t d[kRowGroup];
  uint8_t qs[8][32];
};
struct Q8_0x16u {
  uint16_t d[2 * kRowGroup];
  uint8_t qs[8][64];
};
struct Q4_0x16 {
  uint16_t d[2 * kRowGroup];
  uint8_t qs[4][64];
};
struct Q4_1x8 {
  uint16_t d[kRowGroup];
  uint16_t m[kRowGroup];
  uint8_t qs[4][32];
};
struct Q8_1x8 {
  uint16_t d[kRowGroup];
  uint16_t m[kRowGroup];
  int8_t qs[8][32];
};
// A 4-bit code block whose levels come from a table (kLevels, 16 int8 values).
template <const int8_t* kLevelTable, int kMaxAbsLevel>
struct Lut4x8 {
  static constexpr const int8_t* kLevels = kLevelTable;
  static constexpr int kMaxLevel = kMaxAbsLevel;
  float d[kRowGroup];
  uint8_t qs[4][32];
};
using IQ4_NLx8 = Lut4x8<kIq4NlValues, 127>;
using MXFP4x8 = Lut4x8<kMxfp4Values, 12>;
template <typename T>
constexpr bool kIsLut4x8 = std::is_same_v<T, IQ4_NLx8> || std::is_same_v<T, MXFP4x8>;
static_assert(sizeof(IQ4_NLx8) == 160 && sizeof(MXFP4x8) == 160);
// Lut4x8 for 16 rows (the 512-bit kernels'); kLevelsU8: the levels + 128, the unsigned side of
// vpdpbusd (the core takes 128 * the activation block's quant sum back off, as Q8_0x16u's does).
template <const int8_t* kLevelTable>
struct Lut4x16 {
  static constexpr const int8_t* kLevels = kLevelTable;
  static constexpr std::array<uint8_t, 16> kLevelsU8 = [] {
    std::array<uint8_t, 16> u{};
    for (int i = 0; i < 16; i++) u[i] = static_cast<uint8_t>(kLevelTable[i] + 128);
    return u;
  }();
  float d[2 * kRowGroup];
  uint8_t qs[4][64];
};
using IQ4_NLx16 = Lut4x16<kIq4NlValues>;
using MXFP4x16 = Lut4x16<kMxfp4Values>;
template <typename T>
constexpr bool kIsLut4x16 = std::is_same_v<T, IQ4_NLx16> || std::is_same_v<T, MXFP4x16>;
static_assert(sizeof(IQ4_NLx16) == 320 && sizeof(MXFP4x16) == 320);

static_assert(sizeof(Q4_0x8) == 144 && sizeof(Q8_0x8) == 272 && sizeof(Q8_0x8u) == 272 &&
              sizeof(Q8_0x16u) == 544 && sizeof(Q4_0x16) == 288 && sizeof(Q4_1x8) == 160 &&
              sizeof(Q8_1x8) == 288);

// Decode prefetch distance in blocks per weight stream (prefetches past a matrix's end are
// harmless hints). Measured on Zen 3: 8 blocks (1152 B) speed Q4_0 decode up ~10%; for Q8_0 the
// hardware prefetcher alone did better, so none.
template <typename Packed>
constexpr int kPrefetchBlocks = 0;
template <>
constexpr int kPrefetchBlocks<Q4_0x8> = 8;
// Q4_0x16 (AVX-512): none either. Zen 4 (family 25 model 17), kernels_bench Q4_0 1B.w1 tokens:1,
// one thread: 358 us with 4 blocks ahead, 257 without.
template <>
constexpr int kPrefetchBlocks<Q4_0x16> = 0;
template <>
constexpr int kPrefetchBlocks<Q4_1x8> = 8;  // Q4_0's distance (not measured on its own)
template <>
constexpr int kPrefetchBlocks<IQ4_NLx8> = 8;  // the same (not measured on its own)
template <>
constexpr int kPrefetchBlocks<MXFP4x8> = 8;
// The 16-row code kernels likewise: decode_bench tg64 par, 2 threads, the gpt-oss-shaped
// MXFP4_MOE bench file (docs/moe.md), 3 rounds: 270 / 287 / 257 -> 292 / 352 / 304 tok/s without
// it. IQ4_NLx16 runs the same kernel on the same layout (not measured on its own).
template <>
constexpr int kPrefetchBlocks<IQ4_NLx16> = 0;
template <>
constexpr int kPrefetchBlocks<MXFP4x16> = 0;

// A packed block's 8 row scales as floats: fp16 halves, or the float scales of the Lut4x8 blocks.
template <typename Packed>
inline __m256 RowScales(const Packed& blk) {
  if constexpr (kIsLut4x8<Packed>) {
    return _mm256_loadu_ps(blk.d);
  } else {
    return LoadHalves(blk.d);
  }
}

// acc[t] += isum[t] * (dw * dx) (Q4_0 then + (-8 * dw) * s): per lane exactly the float
// operations of the T = 1 path, so a lane's result does not depend on the tile it ran in.
template <int T, class XA>
inline void Accumulate(const Q4_0x8&, __m256 dw, const __m256i* isum, const XA& x, int b,
                       __m256* acc) {
  const __m256 dw8 = _mm256_mul_ps(dw, _mm256_set1_ps(-8.0f));
  for (int t = 0; t < T; t++) {
    const __m256 scale = _mm256_mul_ps(dw, _mm256_set1_ps(x.D(b, t)));
    acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[t]), scale, acc[t]);
    acc[t] = _mm256_fmadd_ps(dw8, _mm256_set1_ps(x.S(b, t)), acc[t]);
  }
}
template <int T, class XA>
inline void AccumulateQ8(__m256 dw, const __m256i* isum, const XA& x, int b, __m256* acc) {
  for (int t = 0; t < T; t++) {
    const __m256 scale = _mm256_mul_ps(dw, _mm256_set1_ps(x.D(b, t)));
    acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[t]), scale, acc[t]);
  }
}
template <int T, typename Q8Packed, class XA>
requires std::is_same_v<Q8Packed, Q8_0x8> || std::is_same_v<Q8Packed, Q8_0x8u> ||
    kIsLut4x8<Q8Packed>
inline void Accumulate(const Q8Packed&, __m256 dw, const __m256i* isum, const XA& x, int b,
                       __m256* acc) {
  AccumulateQ8<T>(dw, isum, x, b, acc);
}
template <int T, typename MinPacked, class XA>
requires std::is_same_v<MinPacked, Q4_1x8> || std::is_same_v<MinPacked, Q8_1x8>
inline void Accumulate(const MinPacked& blk, __m256 dw, const __m256i* isum, const XA& x, int b,
                       __m256* acc) {
  // Q4_1 / Q5_1 over kQ8_1 rows: + m * s, s llama.cpp's q8_1 block sum (MatmulQ4_1Q8ActRef).
  const __m256 m = LoadHalves(blk.m);
  for (int t = 0; t < T; t++) {
    const __m256 scale = _mm256_mul_ps(dw, _mm256_set1_ps(x.D(b, t)));
    acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[t]), scale, acc[t]);
    acc[t] = _mm256_fmadd_ps(m, _mm256_set1_ps(x.S(b, t)), acc[t]);
  }
}

// The kernel of the shared row-group driver (q8_rows.h): per block, the G * T integer block
// dot products from Dots (Dots::Run<G, T>(grp, x, b, isum): isum[g][t] lane r = the exact dot
// product of group g's row r's block b, Q4_0 as raw nibbles, with token t's), then each lane's
// float steps. kOctets: the tokens come as octets (MatmulInput::kQ8Octets), else as Q8 rows.
template <typename PackedT, class Dots, bool kOctets = false>
struct Q8Kernel : Q8TileInput<kOctets> {
  using Packed = PackedT;
  using X = typename Q8TileInput<kOctets>::X;
  static constexpr int kBlockElems = 32;

  template <int G, int T>
  static void Tile(const Packed* const* grp, int n_blocks, const X* x, __m256 (*acc)[T],
                   bool ahead) {
    Q8TileInput<kOctets>::template Run<G, T>(
        x, acc, [=](const auto& xa, __m256(*a)[T]) { TileOf<G, T>(grp, n_blocks, xa, a, ahead); });
  }

  template <int G, int T, class XA>
  static void TileOf(const Packed* const* grp, int n_blocks, const XA& x, __m256 (*acc)[T],
                     bool ahead) {
    for (int b = 0; b < n_blocks; b++) {
      if (T == 1 && 0 < kPrefetchBlocks<Packed>) {  // decode streams the weights from DRAM once
        for (int i = 0; i < G; i++) Prefetch(grp[i] + b + kPrefetchBlocks<Packed>, sizeof(Packed));
      }
      if (T > 1 && ahead) {
        // Block b of the next G groups: with few tokens (batched decode) a tile is too short for
        // the hardware prefetcher to hide the DRAM fetch of the next groups' weights. Into L2
        // (PrefetchL2): a group is 12-48 KB ahead on bench-110M, past L1 by the time it is read,
        // and prefetcht0 held L1 miss buffers the tile's own loads wanted. Session 27, Zen 4,
        // kernels_bench one core from DRAM, 2 alternations, us: AVX-512 Q8_0 w2 8 tokens
        // 120-124 -> 76-80, w1 16 tokens 165-168 -> 149-150, 128 tokens unchanged; AVX2 w2 8
        // tokens 209-211 -> 202 (compute-bound here). Engine, decode_bench bench-110M Q8_0, 2
        // threads, 3 alternations: tg64x7 1102-1183 -> 1406-1501 tok/s, tg64x8 1590-1634 ->
        // 1864-1891, tg64x16 1843-2049 -> 1888-2313, tg64 unchanged.
        for (int i = 0; i < G; i++) PrefetchL2(grp[i] + G * n_blocks + b, sizeof(Packed));
      }
      __m256i isum[G][T];
      Dots::template Run<G, T>(grp, x, b, isum);
      for (int i = 0; i < G; i++) {
        Accumulate<T>(grp[i][b], RowScales(grp[i][b]), isum[i], x, b, acc[i]);
      }
    }
  }
};

// (The Q8Kernel reads tokens as Q8 rows or, kOctets, as octets: the VNNI cores do for more than
// one token, kernels/avx512/x16_zmm.h says why; the AVX2 maddubs core keeps rows, which measured
// the same: its 1 x 8 tile is short of the 16 vector registers, not of pointers.)
//
// Tiles of 1 group x 8 tokens (batched decode of 8 streams and prefill: each weight register
// serves 8 tokens, and a group's weights are read once for all of them), then 2 groups x 4 tokens
// for 4-7 tokens left, then the last 2-3 tokens as one 2-group tile, a last single token over
// kTailGroups groups at once (single-stream decode: every group, that many streams in flight).
// Measured on Zen 3 (kernels_bench Q8_0 110M, one core): 1 x 8 tiles take 2-12% less time than
// 2 x 4 at 8, 16 and 128 tokens. Batches go by in chunks of 4 groups (q8_rows.h), so a
// ragged batch reads the weights once: the classifier (32000 x 768) at 3 tokens took 7.6-9.7 ms
// with each leftover token a pass of its own and 3.2-4.0 ms after, at 7 tokens 11.1-13.3
// -> 5.7-7.1.
constexpr int kQ8RaggedGroups = 2;
constexpr int kQ8TileTokens = 8;
constexpr int kQ8MidTokens = 4;
// 4 streams: measured 1.3-1.5x faster decode than 1 on Zen 3 (more DRAM reads in flight). With
// AVX-512's 32 registers (the 16-row groups) 8: Zen 4, Q8_0 1B.w1 tokens:1 425 -> 387 us.
#if defined(__AVX512VL__)
constexpr int kQ8TailGroups = 8;
#else
constexpr int kQ8TailGroups = 4;
#endif

// y[t, r] = x[t] . w[r] for r in `rows` by a Q8_0 / Q4_0 kernel on the tiles above (the 512-bit
// kernels', kernels/avx512/x16_zmm.h, with groups of 16 rows).
template <class Kernel>
void MatmulQ8Tiles(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                   RowRange rows) {
  MatmulRowGroups<Kernel, 1, kQ8TileTokens, kQ8TailGroups, 2, kQ8MidTokens, kQ8RaggedGroups>(
      w, xq, y, n_tokens, in_dim, out_dim, rows);
}

// y[t, r] = x[t] . w[r] for r in `rows`, w packed as `Packed`, integer core `Dots`; xq: Q8 rows,
// or with kOctetsInput (MatmulInput::kQ8Octets) for more than one token their octets
// (kernels/q8_act.h).
template <typename Packed, class Dots, bool kOctetsInput>
void MatmulQ8Packed(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                    RowRange rows) {
  if (!kOctetsInput || n_tokens == 1) {
    MatmulQ8Tiles<Q8Kernel<Packed, Dots>>(w, xq, y, n_tokens, in_dim, out_dim, rows);
  } else {
    MatmulQ8Tiles<Q8Kernel<Packed, Dots, true>>(w, xq, y, n_tokens, in_dim, out_dim, rows);
  }
}

}  // namespace smallmind::kernels::SMALLMIND_X86_NS
