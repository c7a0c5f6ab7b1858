// The AMX Q8_0 matmul over Q8 activations, on weights packed 16 rows a group (Q8_0x16u,
// q8_0x8.h: each quant stored as q + 128), less its tile instructions: Tiles is the real AMX
// (kernels/amx/matmul_amx.cc) or a scalar stand-in (tests/kernels/amx_emulated.cc), so the logic
// here is checked on every machine and the instructions where the CPU has them.
//
// One block (32 elements) of one group against T <= 16 tokens is one TDPBSUD: the activations'
// tile A is the T tokens' 32 quants of that block, read in place from the Q8 activation rows (T
// rows, a Q8 row apart); the weights' tile B is the packed block itself, as it lies (8 rows of 64
// bytes: row m holds quants 4m .. 4m + 3 of each of the group's 16 rows, the 4-byte pairs B wants);
// C[t][r] = sum of token t's signed quants times row r's unsigned ones. Less 128 x the token's
// block quant sum (Q8 activation rows carry it), that is the exact integer block dot product the
// VNNI and AVX2 cores compute, and the float steps after it are theirs (q8_0x8.h
// AccumulateQ8, blocks in order), so the AMX kernel gives their bits, for every batch size and
// tile, on both paths. 1-3 tokens (memory-bound decode) run the avx512 set's 512-bit kernel on the
// same layout (kernels/avx512/x16_zmm.h), as the avx512 set does.
//
// Measured on the lent Xeon (Emerald Rapids, 2.55 GHz, session 19; a microbenchmark): TDPBSUD of
// 16 x 8 x 32 took 16 cycles, 16 x 16 x 32 22, a tile store of 16 rows 27, and one block's
// load-product-store ran ~60 cycles with nothing overlapping; a tile store is not forwarded to
// the vector loads after it. Hence 16 columns per product (8-row groups gave no gain over VNNI)
// and the stores issued a batch of blocks ahead of the float steps that read them. Even so the
// per-block stores and float steps bound it: one core, min of 5, against the AVX-512 VNNI kernel,
// bench-110M's w1 (2048 x 768) at 8 / 16 / 128 tokens 162 / 232 / 1648 us vs 146 / 259 / 1949,
// the classifier (32000 x 768) 2281 / 3336 / 35531 vs 2172 / 3864 / 36457: so dispatch picks it
// only by name. Where to go next: the C tiles' float steps in 512-bit registers (16 rows each)
// and an integer accumulation across blocks that needs no store per block.
//
// Included only by files built with AVX2 (or more) enabled; pure inline templates; thread-safe
// (tile state is per thread: each call configures its own and releases it).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "kernels/kernels.h"
#include "kernels/partition.h"
#include "kernels/q8_act.h"
#include "kernels/x86/q8_0x8.h"
#include "kernels/x86/q8_rows.h"
#include "kernels/x86/x86_util.h"

namespace smallmind::kernels::SMALLMIND_X86_NS {

// The 64 bytes LDTILECFG reads (palette 1: 8 tiles of at most 16 rows x 64 bytes).
struct alignas(64) AmxTileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};  // bytes per row of tile i
  uint8_t rows[16] = {};
};
static_assert(sizeof(AmxTileConfig) == 64);

constexpr int kAmxGroupRows = 16;  // rows per Q8_0x16u group
// Tokens per AMX tile (A and C rows: 16 at most) and groups per chunk (their weights stay in
// L1/L2 while every token tile of the chunk reads them: prefill's 128 tokens are 8 tiles).
constexpr int kAmxTileTokens = 16;
constexpr int kAmxChunkGroups = 4;
// Fewer tokens than this run Small (no tile amortizes its cost over so few).
constexpr int kAmxMinTokens = 4;

// Tiles provides (k, c, a, b: tile numbers, compile-time):
//   static void Configure(const AmxTileConfig&);  static void Release();
//   template <int k> static void Load(const void* p, size_t stride);   rows of colsb bytes
//   template <int k> static void Store(void* p, size_t stride);
//   template <int k> static void Zero();
//   template <int c, int a, int b> static void DpBsud();  C[m][n] += sum over k of
//       int8 A[m][4k + i] * uint8 B[k][4n + i], i < 4
// Small: the Q8_0 matmul on the same layout (Q8_0x16u) for fewer than kAmxMinTokens tokens.
template <class Tiles, MatmulFn Small>
struct AmxQ8_0 {
  // Blocks go two at a time on two sets of tiles (A p, B 2 + p, C 4 + p), so one block's loads
  // and product need not wait for the other's store.
  static void Configure(int n_tokens) {
    AmxTileConfig cfg;
    for (int p = 0; p < 2; p++) {
      cfg.rows[p] = static_cast<uint8_t>(n_tokens);
      cfg.colsb[p] = 32;
      cfg.rows[2 + p] = 8;
      cfg.colsb[2 + p] = 64;
      cfg.rows[4 + p] = static_cast<uint8_t>(n_tokens);
      cfg.colsb[4 + p] = 64;
    }
    Tiles::Configure(cfg);
  }

  // Blocks per batch: a batch's dot products are stored before the float steps of the batch
  // before it run, so those read stores long since written.
  static constexpr int kBatch = 8;
  template <int T>
  using Products = int32_t[kBatch][T][kAmxGroupRows];  // [block - b0][token][row]

  // The integer block products of blocks [b0, b1) of group grp against tokens x[0 .. T) (rows
  // x_stride bytes apart) into c (less nothing yet: see Floats).
  template <int T>
  static void Dots(const Q8_0x16u* grp, const Q8_0x16u* next, int b0, int b1, const XRow* x,
                   size_t x_stride, Products<T>& c) {
    constexpr size_t kRowBytes = sizeof(c[0][0]);
    int b = b0;
    for (; b + 2 <= b1; b += 2) {
      Prefetch(next + b,
               2 * sizeof(Q8_0x16u));  // the next group's blocks: a hint, past the end too
      Tiles::template Load<0>(x[0].qs + 32 * b, x_stride);
      Tiles::template Load<2>(grp[b].qs, 64);
      Tiles::template Load<1>(x[0].qs + 32 * (b + 1), x_stride);
      Tiles::template Load<3>(grp[b + 1].qs, 64);
      Tiles::template Zero<4>();
      Tiles::template Zero<5>();
      Tiles::template DpBsud<4, 0, 2>();
      Tiles::template DpBsud<5, 1, 3>();
      Tiles::template Store<4>(c[b - b0], kRowBytes);
      Tiles::template Store<5>(c[b + 1 - b0], kRowBytes);
    }
    if (b < b1) {
      Prefetch(next + b, sizeof(Q8_0x16u));
      Tiles::template Load<0>(x[0].qs + 32 * b, x_stride);
      Tiles::template Load<2>(grp[b].qs, 64);
      Tiles::template Zero<4>();
      Tiles::template DpBsud<4, 0, 2>();
      Tiles::template Store<4>(c[b - b0], kRowBytes);
    }
  }

  // acc[h][t] (rows 8h .. 8h + 7 of group grp, token t) += blocks [b0, b1) from their stored
  // products: each less 128 x the token's block quant sum is the exact integer the VNNI core
  // computes, then its float steps, blocks in order. One half at a time: T accumulators in
  // registers.
  template <int T>
  static void Floats(const Q8_0x16u* grp, int b0, int b1, const XRow* x, const Products<T>& c,
                     __m256 (*acc)[T]) {
    for (int h = 0; h < 2; h++) {
      __m256 a[T];
      for (int t = 0; t < T; t++) a[t] = acc[h][t];
      for (int b = b0; b < b1; b++) {
        __m256i isum[T];
        for (int t = 0; t < T; t++) {
          isum[t] = _mm256_add_epi32(
              _mm256_load_si256(reinterpret_cast<const __m256i*>(&c[b - b0][t][8 * h])),
              _mm256_set1_epi32(-128 * x[t].qsum[b]));
        }
        AccumulateQ8<T>(LoadHalves(grp[b].d + 8 * h), isum, RowsX{x}, b, a);
      }
      for (int t = 0; t < T; t++) acc[h][t] = a[t];
    }
  }

  // Groups [g_begin, g_end) (rows inside `rows`) for tokens [t0, t0 + T); tiles configured for T.
  // The work goes by in batches (a group's blocks kBatch at a time, group after group), the
  // products of each batch issued before the float steps of the one before it.
  template <int T>
  static void Groups(const Q8_0x16u* packed, int n_blocks, const void* xq, int in_dim, int g_begin,
                     int g_end, int t0, RowRange rows, int out_dim, float* y) {
    XRow x[T];
    for (int i = 0; i < T; i++) x[i] = MakeXRow(xq, in_dim, t0 + i);
    const size_t x_stride = Q8ActRowBytes(in_dim);
    alignas(64) Products<T> c[2];
    alignas(32) __m256 acc[2][T];
    const auto zero = [&] {
      for (auto& half : acc) {
        for (__m256& v : half) v = _mm256_setzero_ps();
      }
    };
    zero();
    const auto group = [&](int g) { return packed + static_cast<int64_t>(g) * n_blocks; };
    struct Batch {
      int g, b0, b1;
    };
    Batch prev{};
    int i = 0;
    for (int g = g_begin; g < g_end; g++) {
      for (int b0 = 0; b0 < n_blocks; b0 += kBatch, i++) {
        const Batch cur{g, b0, std::min(b0 + kBatch, n_blocks)};
        Dots<T>(group(g), group(g + 1), cur.b0, cur.b1, x, x_stride, c[i & 1]);
        if (i > 0) {
          Floats<T>(group(prev.g), prev.b0, prev.b1, x, c[(i - 1) & 1], acc);
          if (prev.b1 == n_blocks) {  // the group's last batch: its rows are done
            for (int h = 0; h < 2; h++) StoreGroup<T>(acc[h], 2 * prev.g + h, rows, t0, out_dim, y);
            zero();
          }
        }
        prev = cur;
      }
    }
    if (i > 0) {
      Floats<T>(group(prev.g), prev.b0, prev.b1, x, c[(i - 1) & 1], acc);
      for (int h = 0; h < 2; h++) StoreGroup<T>(acc[h], 2 * prev.g + h, rows, t0, out_dim, y);
    }
  }

  using GroupsFn = void (*)(const Q8_0x16u*, int, const void*, int, int, int, int, RowRange, int,
                            float*);
  template <size_t... I>
  static constexpr std::array<GroupsFn, sizeof...(I)> MakeGroups(std::index_sequence<I...>) {
    return {&Groups<static_cast<int>(I) + 1>...};
  }
  // kGroups[T - 1] = Groups<T>.
  static constexpr std::array<GroupsFn, kAmxTileTokens> kGroups =
      MakeGroups(std::make_index_sequence<kAmxTileTokens>());

  // y[t, r] = x[t] . w[r] for r in `rows`.
  static void Matmul(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                     RowRange rows) {
    if (n_tokens < kAmxMinTokens) return Small(w, xq, y, n_tokens, in_dim, out_dim, rows);
    const int n_blocks = in_dim / 32;
    const auto* packed = static_cast<const Q8_0x16u*>(w);
    const int g_begin = rows.begin / kAmxGroupRows;
    const int g_end = (rows.end + kAmxGroupRows - 1) / kAmxGroupRows;
    int configured = 0;  // the T the tiles hold now
    for (int c = g_begin; c < g_end; c += kAmxChunkGroups) {
      const int c_end = std::min(c + kAmxChunkGroups, g_end);
      for (int t0 = 0; t0 < n_tokens; t0 += kAmxTileTokens) {
        const int n = std::min(kAmxTileTokens, n_tokens - t0);
        if (n != configured) {
          Configure(n);
          configured = n;
        }
        kGroups[n - 1](packed, n_blocks, xq, in_dim, c, c_end, t0, rows, out_dim, y);
      }
    }
    Tiles::Release();
  }
};

}  // namespace smallmind::kernels::SMALLMIND_X86_NS
