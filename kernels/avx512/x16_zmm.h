// The Q8_0, Q4_0, IQ4_NL and MXFP4 matmuls over Q8 activations on 16-lane registers, less the
// registers: weights packed 16 rows a group (Q8_0x16u, Q4_0x16, IQ4_NLx16, MXFP4x16: q8_0x8.h), so
// one 64-byte row of a block holds 4 consecutive quants (Q4_0: 4 bytes of nibble pairs) of each of
// 16 rows and one vpdpbusd against 4 activation quants broadcast to every lane advances all 16
// rows: 64 multiply-adds an instruction, twice the 256-bit VNNI cores'. V is the 16-lane ops:
// AVX-512 (matmul_x16_avx512.cc) or a stand-in of two 256-bit halves
// (tests/kernels/zmm_emulated.cc), so the logic here is checked on every machine and the
// instructions where the CPU has them.
//
// Each lane ends a block holding its row's exact integer block dot product as the 256-bit VNNI
// cores compute it (vnni_cores.h: Q8_0's sum starts at -128 x the token's block quant sum,
// its quants stored q + 128; Q4_0's is over the raw nibbles; IQ4_NL's and MXFP4's are Q8_0's
// on their codes' levels + 128, looked up by vpshufb, the integers of the AVX2 Lut4x8 kernels and
// of the blocks widened to Q8_0), and the float steps after it are
// the 256-bit kernels' (q8_0x8.h Accumulate: scale = dw * dx, acc = fma(float(isum), scale,
// acc), Q4_0 then acc = fma(-8 dw, s, acc); blocks in order), lane for lane: the same bits as
// the AVX2, AVX-VNNI and AMX kernels, for every tile and batch, on both paths.
//
// Tiles as the 8-row kernels' with groups twice as tall (q8_0x8.h MatmulQ8Tiles): 1 group x
// 8 tokens (8 int32 sums and 8 float accumulators of AVX-512's 32 registers), 2 x 4 for 4-7
// tokens left, 2 x 2-3 for the last 2-3, 4 groups x 1 token for single-stream decode; the driver
// is the 8-row kernels' (q8_rows.h MatmulRowGroups) on 16-row groups, as the engine's row
// split already is (worker/engine/op_runner.cc kMatmulRowGroup). Measured on Zen 5 (session 20,
// kernels_bench Q8_0, one core, min of 3 interleaved runs): 1 x 8 beat 2 x 4 and 1 x 12 at 8 and
// 16 tokens (w1 8 tokens 64 vs 86 and 88 us); a single-token tail of 4 groups and of 1 alike, 2
// slower. (2 x 4 again in session 22, with octets: 76-78 vs 55-62 us.)
//
// Two whole octets at a time (16 or more tokens) run block by block, both octets per block
// (TilePair): session 25, Zen 5, kernels_bench one core, 3 alternations, us: w1 16 tokens from
// DRAM 116-119 -> 110-111, w2 119-125 -> 103-109, the classifier 1741-1813 -> 1631-1661, w2 128
// tokens 776-793 -> 700-724.
//
// More than one token comes as octets (MatmulInput::kQ8Octets, kernels/q8_act.h): the 1 x 8 tile
// then reads every token's quads, scales and VNNI starts from one pointer each at fixed offsets
// (OctetX); from rows (RowsX, one token) 8 tokens took 32 pointers and GCC spilled them. Session
// 22, Zen 5, kernels_bench one core, w1 8 tokens from cache 57-60 -> 49-55 us, 128 tokens 851-932
// -> 774-799.
//
// Included only by files built with AVX2 (or more) enabled; pure inline templates; thread-safe.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/partition.h"
#include "kernels/q8_act.h"
#include "kernels/x86/q8_0x8.h"
#include "kernels/x86/q8_rows.h"
#include "kernels/x86/x86_util.h"

namespace smallmind::kernels::SMALLMIND_X86_NS {

// V provides (I: 16 int32 lanes, F: 16 float lanes, each 64 bytes, lane i at bytes 4i):
//   static I Load(const uint8_t* p);              64 bytes
//   static I Set1(int32_t v);  static F Set1(float v);
//   static I LowNibbles(I v);  static I HighNibbles(I v);   each byte's low / high 4 bits
//   static I DpBusd(I acc, I u, I s);             vpdpbusd: unsigned u x signed s
//   static F Halves(const uint16_t* h);           16 fp16 values as floats
//   static F Floats(const float* f);              16 floats
//   static I Table16(const uint8_t* p);           16 bytes in each 16-byte quarter
//   static I Lookup(I table, I idx);              vpshufb: table's byte idx (0..15) of each quarter
//   static F Float(I v);  static F Mul(F a, F b);  static F Fma(F a, F b, F c);  a * b + c, fused
//   static void Fence(I& v);                      the compiler may not move work across it
// kOctets: the input of n_tokens > 1 is octets (MatmulInput::kQ8Octets), else Q8 rows.
template <typename PackedT, class V, bool kOctets = false>
requires std::is_same_v<PackedT, Q8_0x16u> || std::is_same_v<PackedT, Q4_0x16> ||
    kIsLut4x16<PackedT>
struct X16Kernel : Q8TileInput<kOctets> {
  using Packed = PackedT;
  using Acc = typename V::F;
  using I = typename V::I;
  using F = typename V::F;
  using X = typename Q8TileInput<kOctets>::X;
  static constexpr int kBlockElems = 32;
  static constexpr bool kQ4 = std::is_same_v<Packed, Q4_0x16>;
  static constexpr bool kLut = kIsLut4x16<Packed>;

  // 4 activation quants in every lane.
  static I Quads(const int8_t* p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return V::Set1(v);
  }

  // isum[g][t] lane r = group g's row r's block b times token t's (see the top of the file).
  template <int G, int T, class XA>
  static void Dots(const Packed* const* grp, const XA& x, int b, I (*isum)[T]) {
    for (int t = 0; t < T; t++) {
      const I start = V::Set1(kQ4 ? 0 : x.Start(b, t));
      for (int g = 0; g < G; g++) isum[g][t] = start;
    }
    if constexpr (kLut) {  // each nibble's level + 128 by a byte shuffle, then Q8_0x16u's core
      const I levels = V::Table16(Packed::kLevelsU8.data());
#pragma GCC unroll 4
      for (int m = 0; m < 4; m++) {
        for (int g = 0; g < G; g++) {
          const I w = V::Load(grp[g][b].qs[m]);
          const I lo = V::Lookup(levels, V::LowNibbles(w));
          const I hi = V::Lookup(levels, V::HighNibbles(w));
          for (int t = 0; t < T; t++) {
            isum[g][t] = V::DpBusd(isum[g][t], lo, Quads(x.Quad(b, m, t)));
            isum[g][t] = V::DpBusd(isum[g][t], hi, Quads(x.Quad(b, m + 4, t)));
          }
        }
        Fence<G, T>(isum);
      }
    } else if constexpr (kQ4) {
#pragma GCC unroll 4
      for (int m = 0; m < 4; m++) {
        for (int g = 0; g < G; g++) {  // one group's nibbles at a time: 2 registers, not 2 G
          const I w = V::Load(grp[g][b].qs[m]);
          const I lo = V::LowNibbles(w), hi = V::HighNibbles(w);
          for (int t = 0; t < T; t++) {
            isum[g][t] = V::DpBusd(isum[g][t], lo, Quads(x.Quad(b, m, t)));
            isum[g][t] = V::DpBusd(isum[g][t], hi, Quads(x.Quad(b, m + 4, t)));
          }
        }
        Fence<G, T>(isum);
      }
    } else {
#pragma GCC unroll 8
      for (int m = 0; m < 8; m++) {
        I w[G];
        for (int g = 0; g < G; g++) w[g] = V::Load(grp[g][b].qs[m]);
        for (int t = 0; t < T; t++) {  // each broadcast serves the G groups
          const I xb = Quads(x.Quad(b, m, t));
          for (int g = 0; g < G; g++) isum[g][t] = V::DpBusd(isum[g][t], w[g], xb);
        }
        // No Fence here: with 32 registers nothing spills without it, and with it GCC kept the
        // sums in memory too, storing every one of them once a block (session 22, Zen 5, one
        // core: w1 8 tokens from cache 52.7-58.3 -> 50.0-50.8 us, 128 tokens 813-845 ->
        // 769-777). Q4_0's two nibble registers a group keep it.
      }
    }
  }

  // A block's 16 row scales: fp16 halves, or the Lut4x16 blocks' floats.
  static F RowScales(const Packed& blk) {
    if constexpr (kLut) {
      return V::Floats(blk.d);
    } else {
      return V::Halves(blk.d);
    }
  }

  template <int G, int T>
  static void Fence(I (*isum)[T]) {
    for (int g = 0; g < G; g++) {
      for (int t = 0; t < T; t++) V::Fence(isum[g][t]);
    }
  }

  template <int G, int T>
  static void Tile(const Packed* const* grp, int n_blocks, const X* x, Acc (*acc)[T], bool ahead) {
    Q8TileInput<kOctets>::template Run<G, T>(
        x, acc, [=](const auto& xa, Acc(*a)[T]) { TileOf<G, T>(grp, n_blocks, xa, a, ahead); });
  }

  // Two octets (tokens t .. t + 2T - 1) over the same groups, block by block (the driver's
  // GroupTile with P = 2): each block's weights serve the first octet from memory and the second
  // from L1 right after, so a group's weight stream is spread over both octets' work; octet by
  // octet, the first octet's pass fetched the whole group at twice the average rate, more than one
  // core draws from DRAM. Every lane's operations are Tile's, in the same order: the same bits.
  static constexpr bool kTilePairs = kOctets;
  template <int G, int T>
  static void TilePair(const Packed* const* grp, int n_blocks, const X* x, Acc (*acc0)[T],
                       Acc (*acc1)[T], bool ahead) {
    static_assert(kOctets);
    Acc a0[G][T], a1[G][T];
    for (int g = 0; g < G; g++) {
      for (int t = 0; t < T; t++) a0[g][t] = acc0[g][t], a1[g][t] = acc1[g][t];
    }
    const OctetX xa{x[0]}, xb{x[T]};
    for (int b = 0; b < n_blocks; b++) {
      if (ahead) {
        for (int i = 0; i < G; i++) PrefetchL2(grp[i] + G * n_blocks + b, sizeof(Packed));
      }
      Block<G, T>(grp, xa, b, a0);
      Block<G, T>(grp, xb, b, a1);
    }
    for (int g = 0; g < G; g++) {
      for (int t = 0; t < T; t++) acc0[g][t] = a0[g][t], acc1[g][t] = a1[g][t];
    }
  }

  // Block b of the tile into acc.
  template <int G, int T, class XA>
  static void Block(const Packed* const* grp, const XA& x, int b, Acc (*acc)[T]) {
    I isum[G][T];
    Dots<G, T>(grp, x, b, isum);
    for (int g = 0; g < G; g++) {
      const F dw = RowScales(grp[g][b]);
      for (int t = 0; t < T; t++) {
        const F scale = V::Mul(dw, V::Set1(x.D(b, t)));
        acc[g][t] = V::Fma(V::Float(isum[g][t]), scale, acc[g][t]);
      }
      if constexpr (kQ4) {
        const F dw8 = V::Mul(dw, V::Set1(-8.0f));
        for (int t = 0; t < T; t++) acc[g][t] = V::Fma(dw8, V::Set1(x.S(b, t)), acc[g][t]);
      }
    }
  }

  template <int G, int T, class XA>
  static void TileOf(const Packed* const* grp, int n_blocks, const XA& x, Acc (*acc)[T],
                     bool ahead) {
    for (int b = 0; b < n_blocks; b++) {
      if (T == 1 && 0 < kPrefetchBlocks<Packed>) {  // decode streams the weights from DRAM once
        for (int i = 0; i < G; i++) Prefetch(grp[i] + b + kPrefetchBlocks<Packed>, sizeof(Packed));
      }
      if (T > 1 && ahead) {  // block b of the next G groups (see Q8Kernel::TileOf)
        for (int i = 0; i < G; i++) PrefetchL2(grp[i] + G * n_blocks + b, sizeof(Packed));
      }
      Block<G, T>(grp, x, b, acc);
    }
  }
};

// y[t, r] = x[t] . w[r] for r in `rows`, w packed as Packed (Q8_0x16u, Q4_0x16, IQ4_NLx16 or
// MXFP4x16), 16-lane ops V.
// xq: Q8 rows, or with kOctetsInput (MatmulInput::kQ8Octets) for n_tokens > 1 their octets.
template <typename Packed, class V, bool kOctetsInput>
void MatmulX16(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
               RowRange rows) {
  if (kOctetsInput && n_tokens > 1) {
    MatmulQ8Tiles<X16Kernel<Packed, V, true>>(w, xq, y, n_tokens, in_dim, out_dim, rows);
  } else {
    MatmulQ8Tiles<X16Kernel<Packed, V, false>>(w, xq, y, n_tokens, in_dim, out_dim, rows);
  }
}

}  // namespace smallmind::kernels::SMALLMIND_X86_NS
