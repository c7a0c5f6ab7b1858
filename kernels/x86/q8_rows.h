// Shared pieces of the AVX2 matmuls over Q8 activation rows with weights packed 8 rows per group
// (matmul_q8_avx2.cc: Q8_0 / Q4_0, matmul_kquant_avx2.cc: Q4_K / Q6_K; the VNNI files reuse
// them, and the 512-bit Q8_0 / Q4_0 kernels, kernels/avx512/x16_zmm.h, drive 16-row groups with
// them); included only by files built with AVX2 (or more). Pure inline functions and templates;
// thread-safe.
//
// The driver walks the row groups of a RowRange in tiles of G groups x T tokens and stores only
// the lanes inside the range. A kernel's tile computes every (group, token) lane with the op
// sequence of the 1 x 1 tile (tiles only share loads and registers), so the tile shape, batch and
// row split never change a result.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/partition.h"
#include "kernels/q8_act.h"
#include "kernels/x86/x86_util.h"

namespace smallmind::kernels::SMALLMIND_X86_NS {

constexpr int kRowGroup = 8;  // rows per packed group: the 8 int32 / float lanes of a register

// One Q8 activation row, its quants, scales and block sums.
struct XRow {
  const int8_t* qs;      // [in_dim]
  const float* d;        // [in_dim / 32]
  const float* s;        // [in_dim / 32] d * sum of the block's quants
  const int32_t* qsum;   // [in_dim / 32] sum of the block's quants (kQ8 / kQ8_1 rows)
  const int16_t* sum16;  // [in_dim / 16] sum of each 16 quants (kQ8K rows, in qsum's bytes)
};

inline XRow MakeXRow(const void* xq, int in_dim, int t) {
  const void* row = static_cast<const uint8_t*>(xq) + Q8ActRowBytes(in_dim) * t;
  return XRow{Q8ActQuants(row), Q8ActScales(row, in_dim), Q8ActSums(row, in_dim),
              Q8ActQuantSums(row, in_dim), Q8ActSums16(row, in_dim)};
}

// 4 activation quants in every int32 lane.
inline __m256i Broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// 8 fp16 values (a group's per-row scales) as floats.
inline __m256 LoadHalves(const uint16_t* h) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h)));
}

// A tile's activations from Q8 rows (an XRow a token) ...
struct RowsX {
  const XRow* x;
  const int8_t* Quad(int b, int k, int t) const { return x[t].qs + 32 * b + 4 * k; }
  int32_t Start(int b, int t) const { return -128 * x[t].qsum[b]; }
  float D(int b, int t) const { return x[t].d[b]; }
  float S(int b, int t) const { return x[t].s[b]; }
};
// ... or from octets (q8_act.h): token t of the tile is lane t after the first token's.
struct OctetX {
  Q8ActOctetLane x0;
  const int8_t* Quad(int b, int k, int t) const {
    return reinterpret_cast<const int8_t*>(x0.q + (b * 8 + k) * kQ8ActOctet + t);
  }
  int32_t Start(int b, int t) const { return x0.c[b * kQ8ActOctet + t]; }
  float D(int b, int t) const { return x0.d[b * kQ8ActOctet + t]; }
  float S(int b, int t) const { return x0.s[b * kQ8ActOctet + t]; }
};

// What a Q8 kernel's tile reads of its tokens: Q8 rows, or with kOctets octets (q8_act.h). A
// kernel derives from it for the driver's X and MakeX (see KernelX below) and runs each tile
// through Run: tile_of(accessor, acc) with the tokens' accessor, RowsX or OctetX. On octets the
// accumulators are a local copy whose address never escapes: on the driver's array (StoreGroup
// takes its address) GCC stored every accumulator to the stack once a block (session 22, Zen 5:
// part of the 1 x 8 tile's 10%).
template <bool kOctets>
struct Q8TileInput {
  using X = std::conditional_t<kOctets, Q8ActOctetLane, XRow>;

  static X MakeX(const void* xq, int in_dim, int t) {
    if constexpr (kOctets) {
      return Q8ActOctetLaneOf(xq, in_dim, t);
    } else {
      return MakeXRow(xq, in_dim, t);
    }
  }

  template <int G, int T, typename Acc, typename F>
  static void Run(const X* x, Acc (*acc)[T], F&& tile_of) {
    if constexpr (kOctets) {
      Acc local[G][T];
      for (int g = 0; g < G; g++) {
        for (int t = 0; t < T; t++) local[g][t] = acc[g][t];
      }
      tile_of(OctetX{x[0]}, local);
      for (int g = 0; g < G; g++) {
        for (int t = 0; t < T; t++) acc[g][t] = local[g][t];
      }
    } else {
      tile_of(RowsX{x}, acc);
    }
  }
};

// An empty asm that claims to modify each v[g][t]: GCC can no longer hoist the multiplies of
// later steps ahead of the adds of earlier ones (which runs out of registers and spills). "v":
// any vector register the file's flags allow (with AVX-512, all 32).
template <int G, int T, typename V>
inline void Fence(V (*v)[T]) {
  for (int g = 0; g < G; g++) {
    for (int t = 0; t < T; t++) asm("" : "+v"(v[g][t]));
  }
}

// Rows per group of a kernel whose accumulators are V registers: one float lane each.
template <typename V>
constexpr int kGroupRowsOf = static_cast<int>(sizeof(V) / sizeof(float));

// Stores acc (group g's rows, one lane each, for tokens [t0, t0 + T)), only the rows inside
// `rows`. V: __m256 (8 rows) or, in files built with AVX-512, __m512 (16).
template <int T, typename V>
void StoreGroup(const V* acc, int g, RowRange rows, int t0, int out_dim, float* y) {
  constexpr int kRows = kGroupRowsOf<V>;
  const int r0 = g * kRows;
  const int lo = std::max(rows.begin, r0), hi = std::min(rows.end, r0 + kRows);
  for (int t = 0; t < T; t++) {
    float* out = y + static_cast<int64_t>(t0 + t) * out_dim + r0;  // [kRows] of token t0 + t
    if (lo == r0 && hi == r0 + kRows) {
      std::memcpy(out, &acc[t], sizeof(V));  // one unaligned vector store
    } else {
      alignas(64) float lanes[kRows];
      std::memcpy(lanes, &acc[t], sizeof(V));
      for (int r = lo; r < hi; r++) out[r - r0] = lanes[r - r0];
    }
  }
}

// Kernel (a struct) provides:
//   using Packed = ...;                       one packed block of a group
//   using Acc = ...;                          (optional) its float accumulator register: __m256
//                                             by default (8 rows a group), __m512 (16 rows)
//   static constexpr int kBlockElems = ...;   activation elements per packed block
//   template <int G, int T> static void Tile(const Packed* const* grp, int n_blocks,
//                                            const XRow* x, Acc (*acc)[T], bool ahead);
// Tile adds every block of groups grp[0 .. G) times tokens x[0 .. T) into the zeroed acc[g][t].
// `ahead`: the tile is the first over these groups (its tokens start the batch), so a tile of
// several tokens asks for the next groups' weights while it works (later tiles over the same
// groups would only ask again for lines already on their way: prefill's 32 tiles of 4 tokens
// over a Q4_K group made its 128-token matmul 2-8% slower).
template <class Kernel>
struct KernelAcc {
  using type = __m256;
};
template <class Kernel>
requires requires { typename Kernel::Acc; }
struct KernelAcc<Kernel> {
  using type = typename Kernel::Acc;
};

// What a kernel's tile reads of one token: an XRow by default; a kernel that declares `using X`
// and `static X MakeX(const void* xq, int in_dim, int t)` reads its own input layout.
template <class Kernel>
struct KernelX {
  using type = XRow;
  static XRow Make(const void* xq, int in_dim, int t) { return MakeXRow(xq, in_dim, t); }
};
template <class Kernel>
requires requires { typename Kernel::X; }
struct KernelX<Kernel> {
  using type = typename Kernel::X;
  static type Make(const void* xq, int in_dim, int t) { return Kernel::MakeX(xq, in_dim, t); }
};

// Groups [g, g + G) (rows inside `rows`) for tokens [t0, t0 + P T): one tile of T tokens, or with
// P = 2 two, which the kernel's TilePair runs block by block.
template <class Kernel, int G, int T, int P = 1>
void GroupTile(const typename Kernel::Packed* packed, int n_blocks,
               const typename KernelX<Kernel>::type* x, int g, RowRange rows, int t0, int out_dim,
               float* y) {
  static_assert(P == 1 || P == 2);
  const typename Kernel::Packed* grp[G];
  for (int i = 0; i < G; i++) grp[i] = packed + static_cast<int64_t>(g + i) * n_blocks;
  using Acc = typename KernelAcc<Kernel>::type;
  Acc acc[P][G][T];
  for (int p = 0; p < P; p++) {
    for (int i = 0; i < G; i++) {
      for (int t = 0; t < T; t++) acc[p][i][t] = Acc{};
    }
  }
  if constexpr (P == 1) {
    Kernel::template Tile<G, T>(grp, n_blocks, x, acc[0], t0 == 0);
  } else {
    Kernel::template TilePair<G, T>(grp, n_blocks, x, acc[0], acc[1], t0 == 0);
  }
  for (int p = 0; p < P; p++) {
    for (int i = 0; i < G; i++) StoreGroup<T>(acc[p][i], g + i, rows, t0 + p * T, out_dim, y);
  }
}

// Groups [g_begin, g_end) for tokens [t, t + P T), G at a time; a remainder runs with G = 1.
template <class Kernel, int G, int T, int P = 1>
void GroupRun(const typename Kernel::Packed* packed, int n_blocks, const void* xq, int in_dim,
              int g_begin, int g_end, int t, RowRange rows, int out_dim, float* y) {
  typename KernelX<Kernel>::type x[P * T];
  for (int i = 0; i < P * T; i++) x[i] = KernelX<Kernel>::Make(xq, in_dim, t + i);
  int g = g_begin;
  for (; g + G <= g_end; g += G) {
    GroupTile<Kernel, G, T, P>(packed, n_blocks, x, g, rows, t, out_dim, y);
  }
  for (; g < g_end; g++) GroupTile<Kernel, 1, T, P>(packed, n_blocks, x, g, rows, t, out_dim, y);
}

// y[t, r] for r in `rows`. Single-token decode streams every group once, kTailGroups groups at a
// time (that many weight streams in flight). With more tokens the groups go by in chunks of
// kChunk (a multiple of every tile's group count; their weights stay in L1/L2 while the chunk
// runs): each kTileGroups groups over the tokens in tiles of kTileTokens, then the tokens left
// in tiles of kMidTokens over kMidGroups groups (by default none: the same tile), then 2-3 tokens
// left as one tile over kRaggedGroups groups (0: none), then any last ones one at a time over
// kTailGroups groups. So a ragged batch (3, 7, 12, 25 tokens) reads each weight from memory once,
// as a whole number of tiles does, instead of once more per leftover tile or token. A kernel with
// kTilePairs runs whole tiles two at a time, block by block (its TilePair). Every lane's op
// sequence is the tile's, so neither the loop order nor the tile changes a result.
template <class Kernel, int kTileGroups, int kTileTokens, int kTailGroups,
          int kMidGroups = kTileGroups, int kMidTokens = kTileTokens, int kRaggedGroups = 0>
void MatmulRowGroups(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                     RowRange rows) {
  constexpr int kChunk = std::max({kTileGroups, kMidGroups, kTailGroups, kRaggedGroups});
  static_assert(kChunk % kTileGroups == 0 && kChunk % kMidGroups == 0 &&
                kChunk % kTailGroups == 0 && (kRaggedGroups == 0 || kChunk % kRaggedGroups == 0));
  const int n_blocks = in_dim / Kernel::kBlockElems;
  const auto* packed = static_cast<const typename Kernel::Packed*>(w);
  constexpr int kRows = sizeof(typename KernelAcc<Kernel>::type) / sizeof(float);
  const int g_begin = rows.begin / kRows, g_end = (rows.end + kRows - 1) / kRows;
  if (n_tokens == 1) {
    GroupRun<Kernel, kTailGroups, 1>(packed, n_blocks, xq, in_dim, g_begin, g_end, 0, rows, out_dim,
                                     y);
    return;
  }
  const int n_tiled = n_tokens / kTileTokens * kTileTokens;
  const int n_mid = n_tiled + (n_tokens - n_tiled) / kMidTokens * kMidTokens;
  for (int c = g_begin; c < g_end; c += kChunk) {
    const int c_end = std::min(c + kChunk, g_end);
    for (int g = c; g < c_end; g += kTileGroups) {
      int t = 0;
      if constexpr (requires { requires Kernel::kTilePairs; }) {
        for (; t + 2 * kTileTokens <= n_tiled; t += 2 * kTileTokens) {
          GroupRun<Kernel, kTileGroups, kTileTokens, 2>(packed, n_blocks, xq, in_dim, g,
                                                        std::min(g + kTileGroups, c_end), t, rows,
                                                        out_dim, y);
        }
      }
      for (; t < n_tiled; t += kTileTokens) {
        GroupRun<Kernel, kTileGroups, kTileTokens>(
            packed, n_blocks, xq, in_dim, g, std::min(g + kTileGroups, c_end), t, rows, out_dim, y);
      }
    }
    if constexpr (kMidTokens != kTileTokens) {
      for (int t = n_tiled; t < n_mid; t += kMidTokens) {
        GroupRun<Kernel, kMidGroups, kMidTokens>(packed, n_blocks, xq, in_dim, c, c_end, t, rows,
                                                 out_dim, y);
      }
    }
    int t = n_mid;
    if constexpr (kRaggedGroups > 0) {  // 2 or 3 tokens left: one tile, each weight load shared
      if (n_tokens - t == 2) {
        GroupRun<Kernel, kRaggedGroups, 2>(packed, n_blocks, xq, in_dim, c, c_end, t, rows, out_dim,
                                           y);
        t += 2;
      } else if (n_tokens - t == 3) {
        GroupRun<Kernel, kRaggedGroups, 3>(packed, n_blocks, xq, in_dim, c, c_end, t, rows, out_dim,
                                           y);
        t += 3;
      }
    }
    for (; t < n_tokens; t++) {
      GroupRun<Kernel, kTailGroups, 1>(packed, n_blocks, xq, in_dim, c, c_end, t, rows, out_dim, y);
    }
  }
}

}  // namespace smallmind::kernels::SMALLMIND_X86_NS
