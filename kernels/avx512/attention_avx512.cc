// AVX-512 causal attention over a float or half KV cache: the AVX2 kernel's walk
// (attention_walk.h) with the rows of a tile that read the same KV head (the tokens of a
// prefill chunk, the query heads of a GQA group) served together. Per chunk of cache rows, each KV
// head's rows are converted to floats once (KChunk, VChunk), then every pack of up to four of its
// rows runs on them, two rows in each 512-bit register, one per 256-bit half, each element
// broadcast to both halves; the AVX2 kernel loads and converts every element again for each row.
// Each half runs exactly the AVX2 kernel's 8-lane FMA chain, fold and value sums for its row, so
// the results are AttentionAvx2's bits (tests/kernels/attention_avx512_test.cc, every pack shape);
// a tile whose rows are each alone on their KV head (a decode token of a model without GQA) takes
// the AVX2 code itself.
#define SMALLMIND_X86_NS avx512
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/avx512/attention_packs_avx512.h"
#include "kernels/avx512/kernels_avx512.h"
#include "kernels/ref/attention_ref.h"
#include "kernels/x86/attention_walk.h"

// GCC 12's 512-bit conversion and extraction intrinsics (_mm512_cvtph_ps, _mm512_extractf32x8_ps)
// pass an _mm512_undefined_* / _mm256_undefined_* source that its flow analysis then calls
// (maybe-)uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace smallmind::kernels::avx512 {

void attention::RowSoftmax(float* row, int row_len) { SoftmaxAvx512(row, row_len, RowRange{0, 1}); }

namespace {

using attention::ForChunks;
using attention::kLanes;
using attention::kMaxHeadDim;
using attention::kMaxTileHeads;
using attention::kValueChunk;
using attention::PrefetchShare;
using attention::Tile;
using packs::EveryRowAlone;
using packs::FoldEightHalves;
using packs::Groups;
using packs::GroupsOf;
using packs::Halves;
using packs::High;
using packs::Low;
using packs::MakePacks;
using packs::Pack;
using packs::Packs;
using packs::PackSums;
using packs::RowQ;
using packs::RowScores;

// A chunk's K rows of one KV head as floats, 8 dims a group: at[i][j] = row j's dims
// [8i, 8i + 8) (zero for rows past the chunk's n), so a pack's dot loop reads every row at a fixed
// offset and converts nothing.
struct KChunk {
  alignas(64) float at[kMaxHeadDim / 8][kLanes][8];
};

template <typename E>
inline void ConvertK(const E* k, int64_t row_stride, int n, int head_dim, KChunk* out,
                     PrefetchShare pf) {
  for (int j = 0; j < kLanes; j++) {
    pf.Next();
    for (int i = 0; i < head_dim / 8; i++) {
      _mm256_store_ps(out->at[i][j],
                      j < n ? attention::Load8(k + j * row_stride + 8 * i) : _mm256_setzero_ps());
    }
  }
}

// The scores of a pack's rows (kPairs registers of two rows) with a chunk's n (<= 8) K rows: lane
// j of row r = Fold of position j's 8-lane FMA chain over head_dim, divided by scale, stored at
// position p of the row's scores (n lanes).
template <int kPairs>
inline void PackDots(const Tile& tile, const Pack& pk, const KChunk& k, int n, int p,
                     __m512 scale) {
  __m512 acc[kPairs][kLanes];
  for (int q = 0; q < kPairs; q++) {
    for (int j = 0; j < kLanes; j++) acc[q][j] = _mm512_setzero_ps();
  }
  const float* qs[2 * kPairs];
  for (int r = 0; r < 2 * kPairs; r++) qs[r] = RowQ(tile, pk, r);
  for (int i = 0; i < tile.head_dim / 8; i++) {
    __m512 qv[kPairs];
    for (int q = 0; q < kPairs; q++) {
      qv[q] = Halves(_mm256_loadu_ps(qs[2 * q] + 8 * i), _mm256_loadu_ps(qs[2 * q + 1] + 8 * i));
    }
    for (int j = 0; j < kLanes; j++) {
      const __m512 kj = _mm512_broadcast_f32x8(_mm256_load_ps(k.at[i][j]));
      for (int q = 0; q < kPairs; q++) acc[q][j] = _mm512_fmadd_ps(qv[q], kj, acc[q][j]);
    }
  }
  const __mmask8 lanes = static_cast<__mmask8>((1u << n) - 1);
  for (int q = 0; q < kPairs; q++) {
    const __m512 s = _mm512_div_ps(FoldEightHalves(acc[q]), scale);
    _mm256_mask_storeu_ps(RowScores(tile, pk, 2 * q) + p, lanes, Low(s));
    _mm256_mask_storeu_ps(RowScores(tile, pk, 2 * q + 1) + p, lanes, High(s));
  }
}

// attention::TileScores for the packs' rows: per chunk, each KV head's rows converted once, then
// every pack of that head.
template <typename E>
void PackedScores(const KvView& kv, const Tile& tile, const Packs& packs, const Groups& groups,
                  int p_lo, int p_hi, float scale) {
  const __m512 scale16 = _mm512_set1_ps(scale);
  KChunk k;
  ForChunks(kv, static_cast<const E*>(kv.k), attention::TileLo(tile), attention::TileHi(tile), p_lo,
            p_hi, kLanes,
            [&](int p, int n, const E* rows, const E*, const attention::Ahead& ahead) {
              for (int h = 0; h < groups.n; h++) {
                const int kv_offset = tile.kv_offset[packs.at[groups.first[h]].g[0]];
                ConvertK(rows + kv_offset, kv.row_stride, n, tile.head_dim, &k,
                         PrefetchShare::Of(ahead, h, groups.n, kLanes));
                for (int i = groups.first[h]; i < groups.first[h + 1]; i++) {
                  const Pack& pk = packs.at[i];
                  if (pk.rows <= 2) {
                    PackDots<1>(tile, pk, k, n, p, scale16);
                  } else {
                    PackDots<2>(tile, pk, k, n, p, scale16);
                  }
                }
              }
            });
}

// A chunk's V rows of one KV head as floats: at[p][d] (a row of kMaxHeadDim floats, so a pack's
// sum reads every vector at a fixed offset).
struct VChunk {
  alignas(64) float at[kValueChunk][kMaxHeadDim];
};

template <typename E>
inline void ConvertV(const E* v, int64_t row_stride, int n, int head_dim, VChunk* out,
                     PrefetchShare pf) {
  for (int p = 0; p < n; p++) {
    pf.Next();
    for (int i = 0; i < head_dim; i += 8) {
      _mm256_store_ps(out->at[p] + i, attention::Load8(v + p * row_stride + i));
    }
  }
}

// o (+)= sum over positions p0 + [0, n), in order, of a[p] * v_p for a pack's rows (kPairs
// registers of two rows), 8 * kVecs dims from d0: each dim the AVX2 ValueChunk's FMA sequence.
// `first`: o holds nothing yet.
template <int kPairs, int kVecs>
inline void PackValues(const Tile& tile, const Pack& pk, const VChunk& v, int p0, int n, int d0,
                       bool first) {
  PackSums<kPairs, kVecs> sums(tile, pk, p0, d0, first);
  for (int p = 0; p < n; p++) {
    const float* row = v.at[p] + d0;
    __m512 w[kPairs];
    for (int q = 0; q < kPairs; q++) w[q] = sums.Weights(q, p);
    for (int i = 0; i < kVecs; i++) {
      const __m512 x = _mm512_broadcast_f32x8(_mm256_load_ps(row + 8 * i));
      for (int q = 0; q < kPairs; q++) sums.acc[q][i] = _mm512_fmadd_ps(w[q], x, sums.acc[q][i]);
    }
  }
  sums.Store();
}

// PackValues for `vecs` (1 .. 8) vectors of dims.
template <int kPairs>
inline void PackValuesN(int vecs, const Tile& tile, const Pack& pk, const VChunk& v, int p0, int n,
                        int d0, bool first) {
  switch (vecs) {
    case 8: return PackValues<kPairs, 8>(tile, pk, v, p0, n, d0, first);
    case 7: return PackValues<kPairs, 7>(tile, pk, v, p0, n, d0, first);
    case 6: return PackValues<kPairs, 6>(tile, pk, v, p0, n, d0, first);
    case 5: return PackValues<kPairs, 5>(tile, pk, v, p0, n, d0, first);
    case 4: return PackValues<kPairs, 4>(tile, pk, v, p0, n, d0, first);
    case 3: return PackValues<kPairs, 3>(tile, pk, v, p0, n, d0, first);
    case 2: return PackValues<kPairs, 2>(tile, pk, v, p0, n, d0, first);
    default: return PackValues<kPairs, 1>(tile, pk, v, p0, n, d0, first);
  }
}

// attention::TileValues for the packs' rows, 64 dims at a time: per chunk, each KV head's rows
// converted once, then every pack of that head.
template <typename E>
void PackedValues(const KvView& kv, const Tile& tile, const Packs& packs, const Groups& groups,
                  int p_lo, int p_hi) {
  const int hd = tile.head_dim;
  VChunk v;
  ForChunks(kv, static_cast<const E*>(kv.v), attention::TileLo(tile), attention::TileHi(tile), p_lo,
            p_hi, kValueChunk,
            [&](int p0, int n, const E* rows, const E*, const attention::Ahead& ahead) {
              for (int h = 0; h < groups.n; h++) {
                const int kv_offset = tile.kv_offset[packs.at[groups.first[h]].g[0]];
                ConvertV(rows + kv_offset, kv.row_stride, n, hd, &v,
                         PrefetchShare::Of(ahead, h, groups.n, n));
                for (int i = groups.first[h]; i < groups.first[h + 1]; i++) {
                  const Pack& pk = packs.at[i];
                  for (int d0 = 0; d0 < hd; d0 += 64) {
                    const int vecs = std::min(64, hd - d0) / 8;
                    if (pk.rows <= 2) {
                      PackValuesN<1>(vecs, tile, pk, v, p0, n, d0, p0 == tile.lo);
                    } else {
                      PackValuesN<2>(vecs, tile, pk, v, p0, n, d0, p0 == tile.lo);
                    }
                  }
                }
              }
            });
}

// A tile over a float or half cache. Where rows share a KV head: attention::WalkTile's walk with
// the packed scores and value sums, except that the packed scores run on to the tile's last
// position for every token (a token's scores past its own last position land in its scores row,
// which has the room, and are never read), so only the value sums walk each later token's own
// last positions row by row. Else (every row alone on its head) attention::AttendTile.
template <typename E>
void AttendTilePacked(const KvView& kv, const Tile& tile, float scale) {
  if (EveryRowAlone(tile)) return attention::AttendTile<E>(kv, tile, scale);
  Packs packs;
  MakePacks(tile, 0, tile.n_tokens, &packs);
  const int shared_last = tile.first_last;
  const Groups groups = GroupsOf(tile, packs);
  PackedScores<E>(kv, tile, packs, groups, tile.lo, shared_last + tile.n_tokens - 1, scale);
  attention::SoftmaxRows(tile);
  PackedValues<E>(kv, tile, packs, groups, tile.lo, shared_last);
  for (int t = 1; t < tile.n_tokens; t++) {
    attention::TileValues<E>(kv, tile, t, t + 1, shared_last + 1, shared_last + t);
  }
}

}  // namespace

void AttentionAvx512(const AttentionArgs& a, RowRange rows) {
  if (a.head_dim > kMaxHeadDim) return AttentionRef(a, rows);
  if (a.kv.type == KvType::kQ8) return AttentionQ8Avx512(a, rows);
  if (a.head_dim % 8 != 0) return avx2::AttentionAvx2(a, rows);
  if (a.kv.type == KvType::kF16) {
    attention::ForEachTile(a, rows, kAttentionTileTokens, [&](const Tile& tile, float scale) {
      AttendTilePacked<uint16_t>(a.kv, tile, scale);
    });
  } else {
    attention::ForEachTile(a, rows, kAttentionTileTokens, [&](const Tile& tile, float scale) {
      AttendTilePacked<float>(a.kv, tile, scale);
    });
  }
}

}  // namespace smallmind::kernels::avx512
