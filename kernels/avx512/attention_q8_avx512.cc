// AVX-512 causal attention over a kQ8 cache: the AVX2 kernel's kQ8 walk (attention_q8_walk.h)
// with the rows of a tile that read the same KV head (a prefill chunk's tokens, a GQA group's
// heads) served together, as the float and half kernel serves them (attention_packs_avx512.h).
// Per chunk of cache rows, each KV head's rows are prepared once: K quants made unsigned (q + 128,
// so vpdpbusd multiplies them by the query's signed quants) and V quants converted to floats; then
// every pack of up to four of its rows runs on them, two rows a 512-bit register.
//
// Every row keeps the AVX2 kernel's arithmetic, so the results are its bits
// (tests/kernels/attention_avx512_test.cc): a score's block dot is the same exact integer (the
// unsigned quants' dot less 128 x the query block's quant sum; no product or sum leaves int32),
// then per block in order s = fma(float(dot), dq * dk, s), and s / scale; a value sum is, position
// by position in order, o = fma(a * dv, float(v), o). A tile whose rows are each alone on their KV
// head (a decode token of a model without GQA) takes the AVX2 walk itself: with one row per K row
// nothing is shared, and its 256-bit loop was as fast on Zen 4.
#define SMALLMIND_X86_NS avx512
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/avx512/attention_packs_avx512.h"
#include "kernels/avx512/kernels_avx512.h"
#include "kernels/x86/attention_q8_walk.h"
#include "kernels/x86/attention_walk.h"

namespace smallmind::kernels::avx512 {
namespace {

using attention::Ahead;
using attention::ForChunks;
using attention::kLanes;
using attention::kMaxHeadDim;
using attention::kValueChunk;
using attention::PrefetchShare;
using attention::RowScale;
using attention::Tile;
using packs::Groups;
using packs::Halves;
using packs::High;
using packs::Low;
using packs::Pack;
using packs::Packs;
using packs::PackSums;
using packs::RowScores;

constexpr int kMaxBlocks = kMaxHeadDim / kKvQ8Block;
// Query values a tile holds: 16 tokens of 12 heads of 64 dims, fewer tokens for wider models.
constexpr int kTileQuants = 16384;

// The tile's query rows quantized (attention::QuantizeTileQ8's quants and scales) and each
// block's quant sum, row (t, g)'s at qsum[(t * n_heads + g) * n_blocks + b].
struct QTile {
  attention::QTileQ8<kTileQuants> q;
  int qsum[kTileQuants / kKvQ8Block];
};

// Lane j of each half = the sum of acc[j]'s 8 int32 lanes in that half (exact: integer adds in
// any order): packs::FoldEightHalves' shuffles with int32 adds.
inline __m512i FoldEightIntHalves(const __m512i* acc) {
  __m512 bits[kLanes];
  for (int j = 0; j < kLanes; j++) bits[j] = _mm512_castsi512_ps(acc[j]);
  return _mm512_castps_si512(packs::FoldEightHalvesBy(bits, [](__m512 a, __m512 b) {
    return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(a), _mm512_castps_si512(b)));
  }));
}

// A chunk's K rows of one KV head: at[b][j] = row j's block b of quants made unsigned (xor 0x80:
// q + 128), dk[b][j] its scale; rows past the chunk's n hold quants 0 and scale 0 (their lanes are
// never stored).
struct KChunkQ8 {
  alignas(64) uint8_t at[kMaxBlocks][kLanes][kKvQ8Block];
  alignas(32) float dk[kMaxBlocks][kLanes];
};

// rows: the chunk's first cache row; koff: the head's first quant in a row.
inline void ConvertKQ8(const int8_t* rows, const KvView& kv, int koff, int n, int n_blocks,
                       KChunkQ8* out, PrefetchShare pf) {
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  const int first_block = koff / kKvQ8Block;
  for (int j = 0; j < kLanes; j++) {
    pf.Next();
    const int8_t* row = rows + j * kv.row_stride;
    for (int b = 0; b < n_blocks; b++) {
      __m256i u = flip;
      float d = 0.0f;
      if (j < n) {
        u = _mm256_xor_si256(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + koff + kKvQ8Block * b)),
            flip);
        d = RowScale(row, kv.scales_offset, first_block + b);
      }
      _mm256_store_si256(reinterpret_cast<__m256i*>(out->at[b][j]), u);
      out->dk[b][j] = d;
    }
  }
}

// The scores of a pack's rows (kPairs registers of two rows) with a chunk's n (<= 8) K rows: lane
// j of row r = sum over blocks b in order of fma(float(dot_jb), dq_rb * dk_jb, .), divided by
// scale, stored at position p of the row's scores (n lanes).
template <int kPairs>
inline void PackDotsQ8(const Tile& tile, const Pack& pk, const QTile& qt, const KChunkQ8& k, int n,
                       int p, __m512 scale16) {
  const int n_blocks = tile.head_dim / kKvQ8Block;
  int rows[2 * kPairs];
  for (int r = 0; r < 2 * kPairs; r++) rows[r] = pk.t[r] * tile.n_heads + pk.g[r];
  __m512 s[kPairs];
  for (int q = 0; q < kPairs; q++) s[q] = _mm512_setzero_ps();
  for (int b = 0; b < n_blocks; b++) {
    __m512i qv[kPairs];
    for (int q = 0; q < kPairs; q++) {
      const auto* q0 =
          reinterpret_cast<const __m256i*>(qt.q.qs + rows[2 * q] * tile.head_dim + kKvQ8Block * b);
      const auto* q1 = reinterpret_cast<const __m256i*>(qt.q.qs + rows[2 * q + 1] * tile.head_dim +
                                                        kKvQ8Block * b);
      qv[q] = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_load_si256(q0)),
                                 _mm256_load_si256(q1), 1);
    }
    __m512i acc[kPairs][kLanes];
    for (int j = 0; j < kLanes; j++) {
      const __m512i kj =
          _mm512_broadcast_i64x4(_mm256_load_si256(reinterpret_cast<const __m256i*>(k.at[b][j])));
      for (int q = 0; q < kPairs; q++) {
        acc[q][j] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), kj, qv[q]);
      }
    }
    const __m512 dk = _mm512_broadcast_f32x8(_mm256_load_ps(k.dk[b]));
    for (int q = 0; q < kPairs; q++) {
      const int i0 = rows[2 * q] * n_blocks + b, i1 = rows[2 * q + 1] * n_blocks + b;
      const __m512i corr = _mm512_inserti64x4(_mm512_set1_epi32(128 * qt.qsum[i0]),
                                              _mm256_set1_epi32(128 * qt.qsum[i1]), 1);
      const __m512i dot = _mm512_sub_epi32(FoldEightIntHalves(acc[q]), corr);
      const __m512 d =
          _mm512_mul_ps(Halves(_mm256_set1_ps(qt.q.d[i0]), _mm256_set1_ps(qt.q.d[i1])), dk);
      s[q] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), d, s[q]);
    }
  }
  const __mmask8 lanes = static_cast<__mmask8>((1u << n) - 1);
  for (int q = 0; q < kPairs; q++) {
    const __m512 sq = _mm512_div_ps(s[q], scale16);
    _mm256_mask_storeu_ps(RowScores(tile, pk, 2 * q) + p, lanes, Low(sq));
    _mm256_mask_storeu_ps(RowScores(tile, pk, 2 * q + 1) + p, lanes, High(sq));
  }
}

// The quants and scales of a row of the tile's KV heads, and the scales of a row one block later
// (ForChunks asks for [TileLo, this) of it ahead).
inline int64_t TileRowEnd(const KvView& kv, const Tile& tile) {
  return kv.scales_offset + 4 * (attention::TileHi(tile) / kKvQ8Block);
}

// The packed walk of positions [p_lo, p_hi] (attention::ForChunks over the elements [lo, hi) of
// each row from base, in chunks of at most `chunk` positions): per chunk, for each KV head h the
// packs read, prepare(rows, kv_offset, n, h, ahead) converts the head's n rows once, then
// run(pack, p, n, pairs) runs each of its packs, pairs an std::integral_constant<int, 1 or 2>
// (registers of two rows the pack needs). (attention_avx512.cc writes the same walk out for float
// and half caches: through this helper its packed prefill ran 2-4% slower, kernels_bench
// BM_Attention/avx512/f16/.../tokens:32 on Zen 4.)
template <typename E, typename Prepare, typename Run>
inline void WalkPacks(const KvView& kv, const E* base, int64_t lo, int64_t hi, int p_lo, int p_hi,
                      int chunk, const Tile& tile, const Packs& packs, const Groups& groups,
                      const Prepare& prepare, const Run& run) {
  ForChunks(kv, base, lo, hi, p_lo, p_hi, chunk,
            [&](int p, int n, const E* rows, const E*, const Ahead& ahead) {
              for (int h = 0; h < groups.n; h++) {
                prepare(rows, tile.kv_offset[packs.at[groups.first[h]].g[0]], n, h, ahead);
                for (int i = groups.first[h]; i < groups.first[h + 1]; i++) {
                  const Pack& pk = packs.at[i];
                  if (pk.rows <= 2) {
                    run(pk, p, n, std::integral_constant<int, 1>{});
                  } else {
                    run(pk, p, n, std::integral_constant<int, 2>{});
                  }
                }
              }
            });
}

// attention::TileScoresQ8 for the packs' rows: per chunk, each KV head's rows made unsigned once,
// then every pack of that head.
void PackedScoresQ8(const KvView& kv, const Tile& tile, const QTile& qt, const Packs& packs,
                    const Groups& groups, int p_lo, int p_hi, float scale) {
  const __m512 scale16 = _mm512_set1_ps(scale);
  const int n_blocks = tile.head_dim / kKvQ8Block;
  KChunkQ8 k;
  WalkPacks(
      kv, static_cast<const int8_t*>(kv.k), attention::TileLo(tile), TileRowEnd(kv, tile), p_lo,
      p_hi, kLanes, tile, packs, groups,
      [&](const int8_t* rows, int kv_offset, int n, int h, const Ahead& ahead) {
        ConvertKQ8(rows, kv, kv_offset, n, n_blocks, &k,
                   PrefetchShare::Of(ahead, h, groups.n, kLanes));
      },
      [&](const Pack& pk, int p, int n, auto pairs) {
        PackDotsQ8<decltype(pairs)::value>(tile, pk, qt, k, n, p, scale16);
      });
}

// A chunk's V rows of one KV head: at[p][d] = row p's quant d as a float (exact), dv[p][b] its
// block b's scale.
struct VChunkQ8 {
  alignas(64) float at[kValueChunk][kMaxHeadDim];
  float dv[kValueChunk][kMaxBlocks];
};

inline void ConvertVQ8(const int8_t* rows, const KvView& kv, int koff, int n, int head_dim,
                       VChunkQ8* out, PrefetchShare pf) {
  const int first_block = koff / kKvQ8Block;
  for (int p = 0; p < n; p++) {
    pf.Next();
    const int8_t* row = rows + p * kv.row_stride;
    for (int i = 0; i < head_dim; i += 16) {
      const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + koff + i));
      _mm512_store_ps(out->at[p] + i, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)));
    }
    for (int b = 0; b < head_dim / kKvQ8Block; b++) {
      out->dv[p][b] = RowScale(row, kv.scales_offset, first_block + b);
    }
  }
}

// o (+)= sum over positions p0 + [0, n), in order, of (a[p] * dv_p,b) * v_p for a pack's rows
// (kPairs registers of two rows), 8 * kVecs dims from d0 (kVecs 4 or 8: one or two blocks): each
// dim the AVX2 ValueChunkQ8's FMA sequence. `first`: o holds nothing yet. attention_avx512.cc's
// PackValues with a weight a block: they share the sums' load and store (PackSums); one template
// for both loops, its weight a callback, made the float and half prefill 2-4% slower
// (kernels_bench on Zen 4), so each loop is written out.
template <int kPairs, int kVecs>
inline void PackValuesQ8(const Tile& tile, const Pack& pk, const VChunkQ8& v, int p0, int n, int d0,
                         bool first) {
  constexpr int kBlocks = kVecs / 4;
  const int b0 = d0 / kKvQ8Block;
  PackSums<kPairs, kVecs> sums(tile, pk, p0, d0, first);
  for (int p = 0; p < n; p++) {
    const float* row = v.at[p] + d0;
    __m512 w[kPairs][kBlocks];
    for (int q = 0; q < kPairs; q++) {
      const __m512 a = sums.Weights(q, p);
      for (int b = 0; b < kBlocks; b++) w[q][b] = _mm512_mul_ps(a, _mm512_set1_ps(v.dv[p][b0 + b]));
    }
    for (int i = 0; i < kVecs; i++) {
      const __m512 x = _mm512_broadcast_f32x8(_mm256_load_ps(row + 8 * i));
      for (int q = 0; q < kPairs; q++) {
        sums.acc[q][i] = _mm512_fmadd_ps(w[q][i / 4], x, sums.acc[q][i]);
      }
    }
  }
  sums.Store();
}

template <int kPairs>
inline void PackValuesQ8N(int vecs, const Tile& tile, const Pack& pk, const VChunkQ8& v, int p0,
                          int n, int d0, bool first) {
  if (vecs == 8) return PackValuesQ8<kPairs, 8>(tile, pk, v, p0, n, d0, first);
  PackValuesQ8<kPairs, 4>(tile, pk, v, p0, n, d0, first);
}

// attention::TileValuesQ8 for the packs' rows, 64 dims at a time: per chunk, each KV head's rows
// converted once, then every pack of that head.
void PackedValuesQ8(const KvView& kv, const Tile& tile, const Packs& packs, const Groups& groups,
                    int p_lo, int p_hi) {
  const int hd = tile.head_dim;
  VChunkQ8 v;
  WalkPacks(
      kv, static_cast<const int8_t*>(kv.v), attention::TileLo(tile), TileRowEnd(kv, tile), p_lo,
      p_hi, kValueChunk, tile, packs, groups,
      [&](const int8_t* rows, int kv_offset, int n, int h, const Ahead& ahead) {
        ConvertVQ8(rows, kv, kv_offset, n, hd, &v, PrefetchShare::Of(ahead, h, groups.n, n));
      },
      [&](const Pack& pk, int p0, int n, auto pairs) {
        for (int d0 = 0; d0 < hd; d0 += 64) {
          PackValuesQ8N<decltype(pairs)::value>(std::min(64, hd - d0) / 8, tile, pk, v, p0, n, d0,
                                                p0 == tile.lo);
        }
      });
}

// A tile over a kQ8 cache: as attention_avx512.cc's AttendTilePacked, on quantized rows.
void AttendTilePackedQ8(const KvView& kv, const Tile& tile, float scale) {
  if (packs::EveryRowAlone(tile)) return attention::AttendTileQ8<kTileQuants>(kv, tile, scale);
  QTile qt;
  attention::QuantizeTileQ8(tile, &qt.q, qt.qsum);
  Packs tile_packs;
  packs::MakePacks(tile, 0, tile.n_tokens, &tile_packs);
  const int shared_last = tile.first_last;
  const Groups groups = packs::GroupsOf(tile, tile_packs);
  PackedScoresQ8(kv, tile, qt, tile_packs, groups, tile.lo, shared_last + tile.n_tokens - 1, scale);
  attention::SoftmaxRows(tile);
  PackedValuesQ8(kv, tile, tile_packs, groups, tile.lo, shared_last);
  for (int t = 1; t < tile.n_tokens; t++) {
    attention::TileValuesQ8(kv, tile, t, t + 1, shared_last + 1, shared_last + t);
  }
}

}  // namespace

void AttentionQ8Avx512(const AttentionArgs& a, RowRange rows) {
  if (a.head_dim > kMaxHeadDim || a.head_dim % kKvQ8Block != 0) {
    return avx2::AttentionAvx2(a, rows);
  }
  const int64_t max_tokens =
      std::min<int64_t>(kAttentionTileTokens, kTileQuants / (a.n_heads * a.head_dim));
  attention::ForEachTile(
      a, rows, std::max<int64_t>(1, max_tokens),
      [&](const Tile& tile, float scale) { AttendTilePackedQ8(a.kv, tile, scale); });
}

}  // namespace smallmind::kernels::avx512
