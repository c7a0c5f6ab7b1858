// The packs of the AVX-512 attention kernels (attention_avx512.cc for float and half caches,
// attention_q8_avx512.cc for kQ8 ones): the rows of a tile that read the same KV head, up to four
// at a time, two in each 512-bit register, one per 256-bit half, so every element of a cache row
// converted once serves them all; and the register helpers their dots and sums share.
// Built with -mavx512f/bw/vl/dq/vnni (kernels/CMakeLists.txt); only for kernels/avx512/ files.
#pragma once
#ifndef SMALLMIND_X86_NS
#define SMALLMIND_X86_NS avx512
#endif
#include <immintrin.h>

#include <cstdint>

#include "kernels/x86/attention_walk.h"

// GCC 12's 512-bit conversion and extraction intrinsics (_mm512_cvtph_ps, _mm512_extractf32x8_ps)
// pass an _mm512_undefined_* / _mm256_undefined_* source that its flow analysis then calls
// (maybe-)uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace smallmind::kernels::avx512::packs {

using attention::kMaxTileHeads;
using attention::Tile;

constexpr int kPackRows = 4;  // two registers of two rows
constexpr int kMaxPacks = kAttentionTileTokens * kMaxTileHeads;

// Up to kPackRows rows (t, g) of a tile that read the same KV head slice. A pack of fewer repeats
// its last row up to the register pair it runs in: the copy computes the same bits and stores them
// to the same place.
struct Pack {
  int8_t t[kPackRows];
  int8_t g[kPackRows];
  int rows;  // 1 .. kPackRows, before the repeat
};

struct Packs {
  Pack at[kMaxPacks];
  int n = 0;
};

// The rows of tokens [t_lo, t_hi) of the tile in packs: heads that share a KV head are adjacent
// (kv_offset[g] = (h + g) / group * head_dim), so each run of equal offsets is one group, and its
// rows go in packs in token-major order.
inline void MakePacks(const Tile& tile, int t_lo, int t_hi, Packs* packs) {
  packs->n = 0;
  for (int g0 = 0; g0 < tile.n_heads;) {
    int g1 = g0 + 1;
    while (g1 < tile.n_heads && tile.kv_offset[g1] == tile.kv_offset[g0]) g1++;
    Pack pack{};
    for (int t = t_lo; t < t_hi; t++) {
      for (int g = g0; g < g1; g++) {
        pack.t[pack.rows] = static_cast<int8_t>(t);
        pack.g[pack.rows] = static_cast<int8_t>(g);
        if (++pack.rows == kPackRows) {
          packs->at[packs->n++] = pack;
          pack = Pack{};
        }
      }
    }
    if (pack.rows > 0) packs->at[packs->n++] = pack;
    g0 = g1;
  }
  for (int i = 0; i < packs->n; i++) {
    Pack& p = packs->at[i];
    for (int r = p.rows; r < kPackRows; r++) {
      p.t[r] = p.t[r - 1];
      p.g[r] = p.g[r - 1];
    }
  }
}

// Every row of the tile alone on its KV head: one token, no two heads on one KV head (a decode
// token of a model without GQA). Checked before any pack is made: it is every such token's case.
inline bool EveryRowAlone(const Tile& tile) {
  if (tile.n_tokens > 1) return false;
  for (int g = 1; g < tile.n_heads; g++) {
    if (tile.kv_offset[g] == tile.kv_offset[g - 1]) return false;
  }
  return true;
}

inline const float* RowQ(const Tile& tile, const Pack& p, int r) {
  return tile.q + p.t[r] * tile.q_dim + p.g[r] * tile.head_dim;
}
inline float* RowScores(const Tile& tile, const Pack& p, int r) {
  return tile.scores + (p.t[r] * tile.n_heads + p.g[r]) * tile.stride;
}
inline float* RowOut(const Tile& tile, const Pack& p, int r) {
  return tile.out + p.t[r] * tile.q_dim + p.g[r] * tile.head_dim;
}

// a's 8 values in the low half, b's in the high.
inline __m512 Halves(__m256 a, __m256 b) {
  return _mm512_insertf32x8(_mm512_castps256_ps512(a), b, 1);
}
inline __m256 Low(__m512 v) { return _mm512_castps512_ps256(v); }
inline __m256 High(__m512 v) { return _mm512_extractf32x8_ps(v, 1); }

// The value sums of a pack's rows over 8 * kVecs dims from d0 (kPairs registers of two rows, one
// per 256-bit half), as both packed kernels' PackValues keep them: att[r] = row r's weights from
// position p0, o[r] its output from d0, acc the running sums, loaded from o (zero when `first`)
// and stored back to it by Store. Only the walk between differs (a weight a position, or one a
// position and block), written out in each kernel.
template <int kPairs, int kVecs>
struct PackSums {
  const float* att[2 * kPairs];
  float* o[2 * kPairs];
  __m512 acc[kPairs][kVecs];

  PackSums(const Tile& tile, const Pack& pk, int p0, int d0, bool first) {
    for (int r = 0; r < 2 * kPairs; r++) {
      att[r] = RowScores(tile, pk, r) + p0;
      o[r] = RowOut(tile, pk, r) + d0;
    }
    for (int q = 0; q < kPairs; q++) {
      for (int i = 0; i < kVecs; i++) {
        acc[q][i] = first ? _mm512_setzero_ps()
                          : Halves(_mm256_loadu_ps(o[2 * q] + 8 * i),
                                   _mm256_loadu_ps(o[2 * q + 1] + 8 * i));
      }
    }
  }

  // Register pair q's weights of position p: row 2q's in the low half, row 2q + 1's in the high.
  __m512 Weights(int q, int p) const {
    return Halves(_mm256_set1_ps(att[2 * q][p]), _mm256_set1_ps(att[2 * q + 1][p]));
  }

  void Store() const {
    for (int q = 0; q < kPairs; q++) {
      for (int i = 0; i < kVecs; i++) {
        _mm256_storeu_ps(o[2 * q] + 8 * i, Low(acc[q][i]));
        _mm256_storeu_ps(o[2 * q + 1] + 8 * i, High(acc[q][i]));
      }
    }
  }
};

// The packs of each KV head: packs [first[h], first[h + 1]) read head h of the tile's groups.
struct Groups {
  int first[kMaxTileHeads + 1];
  int n = 0;
};

inline Groups GroupsOf(const Tile& tile, const Packs& packs) {
  Groups groups;
  for (int i = 0; i < packs.n; i++) {
    if (i == 0 || tile.kv_offset[packs.at[i].g[0]] != tile.kv_offset[packs.at[i - 1].g[0]]) {
      groups.first[groups.n++] = i;
    }
  }
  groups.first[groups.n] = packs.n;
  return groups;
}

// attention::FoldEight of each half: the low half of the result = FoldEight of the low halves of
// acc[0..8), the high half likewise, the same additions in the same order. `add` is the lanes'
// addition: float (FoldEightHalves), or int32 on the same bits for integer dots.
template <typename Add>
inline __m512 FoldEightHalvesBy(const __m512* acc, Add add) {
  // _mm256_hadd_ps(a, b) of each half at once: per 128-bit lane [a0+a1, a2+a3, b0+b1, b2+b3].
  const auto hadd = [&](__m512 a, __m512 b) {
    return add(_mm512_shuffle_ps(a, b, 0x88), _mm512_shuffle_ps(a, b, 0xDD));
  };
  const __m512 ab = hadd(acc[0], acc[1]);
  const __m512 cd = hadd(acc[2], acc[3]);
  const __m512 ef = hadd(acc[4], acc[5]);
  const __m512 gh = hadd(acc[6], acc[7]);
  const __m512 abcd = hadd(ab, cd);
  const __m512 efgh = hadd(ef, gh);
  // permute2f128 0x20 and 0x31 of each half: [abcd.lane0, efgh.lane0] and [abcd.lane1, efgh.lane1]
  // for the low row (128-bit lanes 0, 1), lanes 2, 3 likewise for the high row.
  const __m512i lo = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27);
  const __m512i hi = _mm512_setr_epi32(4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31);
  return add(_mm512_permutex2var_ps(abcd, lo, efgh), _mm512_permutex2var_ps(abcd, hi, efgh));
}
inline __m512 FoldEightHalves(const __m512* acc) {
  return FoldEightHalvesBy(acc, [](__m512 a, __m512 b) { return _mm512_add_ps(a, b); });
}

}  // namespace smallmind::kernels::avx512::packs
