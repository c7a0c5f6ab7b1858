// The walk of the AVX2 attention kernel over the paged KV cache (attention_avx2.cc), shared with
// the AVX-512 one (kernels/avx512/attention_avx512.cc), which replaces the per-row dots and value
// sums of a tile with ones that serve several rows from each cache row it converts, and keeps every
// row's arithmetic. A pass takes a tile of query rows of one sequence inside the row range (the
// heads of one token, or whole tokens of a prefill chunk, as many as the scores scratch holds) and
// walks the positions once, a few rows of a cache block at a time: each chunk of K rows is scored
// for every row of the tile before the next chunk, then each chunk of V rows is summed likewise.
// Rows are so read in address order, whole, once per tile instead of once per head and token. The
// arithmetic of every (token, head) row is the same whichever rows share its tile (the order is
// stated in kernels_avx2.h), so the split of rows among threads never changes a bit.
// Only for the kernels/avx2/ and kernels/avx512/ files (namespace: see x86_util.h).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/kernels.h"
#include "kernels/ref/attention_ref.h"
#include "kernels/x86/x86_util.h"

namespace smallmind::kernels::SMALLMIND_X86_NS::attention {

// Heads of one token a tile may hold (they need not share a KV head).
constexpr int kMaxTileHeads = 32;
constexpr int kMaxHeadDim = 256;  // larger heads take the reference kernel
constexpr int kLanes = 8;         // positions whose dots one fold finishes at once
// Tokens of a prefill chunk that share one walk over the cache in the AVX2 kernel: each chunk of
// K/V rows is then read from memory once for all of them (the kernel loads and converts them
// again for each row, so more tokens a walk gain little).
constexpr int kTileTokens = 8;

// Softmax of one scores row of row_len positions, SoftmaxAvx2's bits: defined by each file that
// includes this walk (attention_avx2.cc: SoftmaxAvx2; attention_avx512.cc: SoftmaxAvx512, 16
// exps at a time).
void RowSoftmax(float* row, int row_len);

// 8 cache elements from p as floats (half: converted exactly); the Tail form loads n (0..8) of
// them, zero in the other lanes, reading nothing past p + n.
inline __m256 Load8(const float* p) { return _mm256_loadu_ps(p); }
inline __m256 Load8(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline __m256 Load8Tail(const float* p, int n) { return LoadTail(p, n); }
inline __m256 Load8Tail(const uint16_t* p, int n) {
  alignas(16) uint16_t h[8] = {};
  for (int i = 0; i < n; i++) h[i] = p[i];
  return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(h)));
}

// The cache lines a chunk's walk asks for ahead of need: `rows` rows of `lines_per_row` 64-byte
// lines from `at` (64-byte aligned), `stride` bytes apart; none when rows is 0.
struct Ahead {
  const char* at = nullptr;
  int64_t stride = 0;
  int lines_per_row = 0;
  int rows = 0;
};

// A cache line asked for ahead of need, into L2 (prefetcht1): a prefetcht0 holds one of the
// core's few L1 miss buffers until its line arrives, and a decode token's walk, which asks for
// whole blocks ahead, then ran at the rate those buffers allow. Measured on Zen 4, one thread, a
// decode token of 12 heads over 2048 positions from DRAM (kernels_bench BM_Attention): half cache
// 10.2 -> 17.9 GB/s, kQ8 cache 7.1 -> 13.0 GB/s. The line moves from L2 to L1 when it is read.
inline void PrefetchLine(const void* p) { _mm_prefetch(static_cast<const char*>(p), _MM_HINT_T1); }

// One work unit's share of an Ahead, issued a few lines per iteration of the loop that works
// meanwhile (a burst of requests fills the core's miss queue and the loads of the work behind it
// wait). The default share asks for nothing.
struct PrefetchShare {
  const char* row = nullptr;  // the row of the next line
  int64_t stride = 0;
  int lines_per_row = 0;
  int col = 0;   // the next line's index in its row
  int left = 0;  // lines still to ask for
  int per = 0;   // lines per iteration

  // Share `unit` of `units` of the lines of `ahead`, over a loop of `iters` iterations.
  static PrefetchShare Of(const Ahead& ahead, int unit, int units, int iters) {
    PrefetchShare s;
    if (ahead.rows == 0 || iters <= 0) return s;
    const int64_t total = int64_t{ahead.rows} * ahead.lines_per_row;
    const int64_t first = total * unit / units;
    const int64_t last = total * (unit + 1) / units;
    s.row = ahead.at + first / ahead.lines_per_row * ahead.stride;
    s.stride = ahead.stride;
    s.lines_per_row = ahead.lines_per_row;
    s.col = static_cast<int>(first % ahead.lines_per_row);
    s.left = static_cast<int>(last - first);
    s.per = (s.left + iters - 1) / iters;
    return s;
  }
  // The next iteration's lines.
  void Next() {
    for (int k = 0; k < per && left > 0; k++, left--) {
      PrefetchLine(row + 64 * col);
      if (++col == lines_per_row) {
        col = 0;
        row += stride;
      }
    }
  }
};

// Lane j of the result = Fold(acc[j]) for j < 8: the 8 folds at once, in Fold's exact order
// ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)).
inline __m256 FoldEight(const __m256* acc) {
  const __m256 ab = _mm256_hadd_ps(acc[0], acc[1]);  // pairs of acc 0, 1 (per 128-bit half)
  const __m256 cd = _mm256_hadd_ps(acc[2], acc[3]);
  const __m256 ef = _mm256_hadd_ps(acc[4], acc[5]);
  const __m256 gh = _mm256_hadd_ps(acc[6], acc[7]);
  const __m256 abcd = _mm256_hadd_ps(ab, cd);  // [a_lo, b_lo, c_lo, d_lo | a_hi, b_hi, ...]
  const __m256 efgh = _mm256_hadd_ps(ef, gh);
  const __m256 lo = _mm256_permute2f128_ps(abcd, efgh, 0x20);  // [a..d lo | e..h lo]
  const __m256 hi = _mm256_permute2f128_ps(abcd, efgh, 0x31);  // [a..d hi | e..h hi]
  return _mm256_add_ps(lo, hi);
}

// A tile: tokens [0, n_tokens) x heads [0, n_heads) of a sequence, relative to the first of each;
// row (t, g) reads q at q + t * q_dim + g * head_dim, the K/V slice at kv_offset[g] of every
// cache row and scores row t * n_heads + g, and writes its output beside its q in out.
struct Tile {
  const float* q;
  float* out;
  int q_dim;
  int kv_offset[kMaxTileHeads];
  int n_heads;
  int n_tokens;
  int head_dim;
  int first_last;  // token t attends to positions lo .. first_last + t
  // The first position every token of the tile sees: 0 but where a sliding window cuts, and then
  // the tile is one token (ForEachTile), so one value sum's start serves all its rows.
  int lo;
  float softcap;  // AttentionArgs::softcap
  // AttentionArgs::sinks of the tile's heads (sinks[g] is head g's), or null.
  const float* sinks;
  float* scores;
  int64_t stride;  // floats per scores row
};

// The elements [TileLo, TileHi) of a cache row hold the KV heads a tile reads.
inline int64_t TileLo(const Tile& t) { return t.kv_offset[0]; }
inline int64_t TileHi(const Tile& t) { return t.kv_offset[t.n_heads - 1] + t.head_dim; }

// The dots of one query head q with the kN K rows k, k + row_stride, ... (kN <= 8): lane j of the
// result = Fold of position j's 8-lane FMA chain over head_dim (a partial last group
// zero-padded), divided by scale. One q load serves kN rows, and the kN chains interleave. Each
// group of 8 dims issues share's next lines (it goes on where the last call left it).
template <int kN, typename E>
inline __m256 ChunkDots(const float* q, const E* k, int64_t row_stride, int full, int tail,
                        __m256 scale8, PrefetchShare& share) {
  PrefetchShare pf = share;  // in registers for the loop
  __m256 acc[kLanes];
  for (int j = 0; j < kLanes; j++) acc[j] = _mm256_setzero_ps();
  for (int i = 0; i < full; i += 8) {
    pf.Next();
    const __m256 q8 = _mm256_loadu_ps(q + i);
    for (int j = 0; j < kN; j++) {
      acc[j] = _mm256_fmadd_ps(q8, Load8(k + j * row_stride + i), acc[j]);
    }
  }
  if (tail > 0) {
    const __m256 q8 = LoadTail(q + full, tail);
    for (int j = 0; j < kN; j++) {
      acc[j] = _mm256_fmadd_ps(q8, Load8Tail(k + j * row_stride + full, tail), acc[j]);
    }
  }
  share = pf;
  return _mm256_div_ps(FoldEight(acc), scale8);
}

// Calls f(p, n, row, next, ahead) for the positions [p_lo, p_hi] in chunks of at most `chunk`
// positions inside one cache block, in order: n positions from p, their first cache row at `row`
// (rows row_stride apart), the next chunk's at `next` (null after the last); `ahead`: the
// elements [lo, hi) of each row of the same slots one block later, the walk's next visit there
// (none past p_hi, none when hi <= lo). Rows of a block are contiguous, so when [lo, hi) is the
// whole row (a tile of every head) the lines asked for ahead are one sequential run: decode reads a
// sequence's cache once per step, from DRAM, and one core streams a strided or bursty pattern of
// requests (each head's slice of the next chunk) at about half the rate of a sequential one. base:
// the K or V row of slot 0 of block 0.
template <typename E, typename F>
inline void ForChunks(const KvView& kv, const E* base, int64_t lo, int64_t hi, int p_lo, int p_hi,
                      int chunk, F&& f) {
  const int64_t row_bytes = kv.row_stride * static_cast<int64_t>(sizeof(E));
  const E* row = p_lo <= p_hi ? base + kv.Offset(p_lo) : nullptr;
  for (int p = p_lo; p <= p_hi;) {
    const int slot = p % kv.block_size;
    const int n = std::min({chunk, kv.block_size - slot, p_hi - p + 1});
    Ahead ahead;
    const int pa = p + kv.block_size;
    if (pa <= p_hi && hi > lo) {
      const E* ahead_row = base + kv.Offset(pa);
      const auto* first = reinterpret_cast<const char*>(ahead_row + lo);
      const auto* end = reinterpret_cast<const char*>(ahead_row + hi);
      ahead.at = reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(first) & ~uintptr_t{63});
      ahead.stride = row_bytes;
      ahead.lines_per_row = static_cast<int>((end - ahead.at + 63) / 64);
      ahead.rows = std::min(n, p_hi - pa + 1);
    }
    const E* next = p + n <= p_hi ? base + kv.Offset(p + n) : nullptr;
    f(p, n, row, next, ahead);
    row = next;
    p += n;
  }
}

// Scores of tokens [t_lo, t_hi) of the tile (every head) at positions [p_lo, p_hi], all inside
// each token's causal range: each chunk of 8 cache rows for every row of the tile before the
// next, each head's 8 dots sharing its q loads; a shorter chunk one position at a time.
template <typename E>
void TileScores(const KvView& kv, const Tile& tile, int t_lo, int t_hi, int p_lo, int p_hi,
                float scale) {
  const int full = tile.head_dim & ~7;
  const int tail = tile.head_dim - full;
  const __m256 scale8 = _mm256_set1_ps(scale);
  ForChunks(kv, static_cast<const E*>(kv.k), TileLo(tile), TileHi(tile), p_lo, p_hi, kLanes,
            [&](int p, int n, const E* k, const E*, const Ahead& ahead) {
              // The first token's dots ask for the rows ahead, in address order, a few lines a
              // group (one share for the whole chunk: Of's divisions once, not per head).
              PrefetchShare pf = PrefetchShare::Of(ahead, 0, 1, tile.n_heads * (full / 8));
              PrefetchShare none;
              for (int g = 0; g < tile.n_heads;
                   g++) {  // each head's slice of the chunk serves every token
                for (int t = t_lo; t < t_hi; t++) {
                  const float* q = tile.q + t * tile.q_dim + g * tile.head_dim;
                  float* s = tile.scores + (t * tile.n_heads + g) * tile.stride + p;
                  const E* kg = k + tile.kv_offset[g];
                  if (n == kLanes) {
                    _mm256_storeu_ps(s, ChunkDots<kLanes>(q, kg, kv.row_stride, full, tail, scale8,
                                                          t == t_lo ? pf : none));
                  } else {
                    for (int j = 0; j < n; j++) {
                      s[j] = _mm256_cvtss_f32(ChunkDots<1>(q, kg + j * kv.row_stride, kv.row_stride,
                                                           full, tail, scale8, none));
                    }
                  }
                }
              }
            });
}

// Positions per V chunk: the rows of one chunk are summed for every head of the pass before the
// next chunk (address order, as the scores), each head's sum in registers across the chunk.
constexpr int kValueChunk = 16;

// o[0 .. width) (+)= sum over p in [p0, p1], in order, of a[p] * v_p[0 .. width), rows v_p =
// rows + (p - p0) * row_stride, width <= 64 (kWidth when it is a compile-time 64, so the 8
// accumulators stay in registers). `first`: o holds nothing yet (the sum starts from zero). Each
// position issues share's next lines.
template <int kWidth, typename E>
inline void ValueChunk(const E* rows, int64_t row_stride, const float* a, int p0, int p1, int width,
                       bool first, float* o, PrefetchShare& share) {
  PrefetchShare pf = share;  // in registers for the loop
  constexpr int kVecs = kWidth == 64 ? 8 : 0;
  const int vecs = kWidth == 64 ? kVecs : (width + 7) / 8;
  __m256 acc[8];
  for (int v = 0; v < 8; v++) acc[v] = _mm256_setzero_ps();
  // Whole vectors by plain loads and stores: a masked store (vmaskmovps) is microcoded on AMD
  // cores, tens of cycles each, and a chunk of a decode token's head did 8 of them.
  if (!first) {
    for (int v = 0; v < vecs; v++) {
      acc[v] = kWidth == 64 ? _mm256_loadu_ps(o + 8 * v)
                            : LoadTail(o + 8 * v, std::min(8, width - 8 * v));
    }
  }
  for (int p = p0; p <= p1; p++) {
    pf.Next();
    const E* row = rows + (p - p0) * row_stride;
    const __m256 w = _mm256_set1_ps(a[p]);
    if constexpr (kWidth == 64) {
      for (int v = 0; v < kVecs; v++) acc[v] = _mm256_fmadd_ps(w, Load8(row + 8 * v), acc[v]);
    } else {
      for (int v = 0; v < vecs; v++) {
        acc[v] = _mm256_fmadd_ps(w, Load8Tail(row + 8 * v, std::min(8, width - 8 * v)), acc[v]);
      }
    }
  }
  share = pf;
  for (int v = 0; v < vecs; v++) {
    if constexpr (kWidth == 64) {
      _mm256_storeu_ps(o + 8 * v, acc[v]);
    } else {
      StoreTail(o + 8 * v, std::min(8, width - 8 * v), acc[v]);
    }
  }
}

// out[t, g] (+)= sum over p in [p_lo, p_hi], in order, of att[t, g][p] * v_p[kv_offset[g] ..]
// for tokens [t_lo, t_hi) of the tile (every head), 64 dims at a time; a partial sum crosses
// chunks (and calls) through out, which keeps every element's order (and bits) those of one
// sequential sum from position tile.lo.
template <typename E>
void TileValues(const KvView& kv, const Tile& tile, int t_lo, int t_hi, int p_lo, int p_hi) {
  const int hd = tile.head_dim;
  ForChunks(kv, static_cast<const E*>(kv.v), TileLo(tile), TileHi(tile), p_lo, p_hi, kValueChunk,
            [&](int p0, int n, const E* rows, const E*, const Ahead& ahead) {
              // The first token's first 64 dims of each head ask for the rows ahead, in address
              // order, a few lines a position (one share for the chunk, as the scores').
              PrefetchShare ahead_share = PrefetchShare::Of(ahead, 0, 1, tile.n_heads * n);
              PrefetchShare none;
              for (int g = 0; g < tile.n_heads; g++) {
                for (int t = t_lo; t < t_hi; t++) {
                  const float* att = tile.scores + (t * tile.n_heads + g) * tile.stride;
                  float* o = tile.out + t * tile.q_dim + g * hd;
                  for (int d0 = 0; d0 < hd; d0 += 64) {
                    const E* v = rows + tile.kv_offset[g] + d0;
                    PrefetchShare& pf = t == t_lo && d0 == 0 ? ahead_share : none;
                    if (hd - d0 >= 64) {
                      ValueChunk<64>(v, kv.row_stride, att, p0, p0 + n - 1, 64, p0 == tile.lo,
                                     o + d0, pf);
                    } else {
                      ValueChunk<0>(v, kv.row_stride, att, p0, p0 + n - 1, hd - d0, p0 == tile.lo,
                                    o + d0, pf);
                    }
                  }
                }
              }
            });
}

// Softmax of every scores row of the tile, each over the positions lo .. its token's own
// (soft-capped first when the tile says so, as the reference does it), with the tile's sinks added
// after it (AddSinkToSoftmax) when it has them.
inline void SoftmaxRows(const Tile& tile) {
  for (int t = 0; t < tile.n_tokens; t++) {
    for (int g = 0; g < tile.n_heads; g++) {
      float* row = tile.scores + (t * tile.n_heads + g) * tile.stride + tile.lo;
      const int len = tile.first_last + t + 1 - tile.lo;
      if (tile.softcap > 0) SoftCapRef(row, len, tile.softcap);
      if (tile.sinks == nullptr) {
        RowSoftmax(row, len);
        continue;
      }
      int argmax = 0;  // the first largest score
      for (int i = 1; i < len; i++) argmax = row[i] > row[argmax] ? i : argmax;
      const float score_max = row[argmax];
      RowSoftmax(row, len);
      AddSinkToSoftmax(row, len, argmax, score_max, tile.sinks[g]);
    }
  }
}

// The whole tile: scores of the positions every token sees (lo .. first_last) in one walk, then
// each later token's own last positions; softmax per row; the value sums likewise. scores and
// values (t_lo, t_hi, p_lo, p_hi) are the cache type's TileScores and TileValues.
template <typename Scores, typename Values>
void WalkTile(const Tile& tile, const Scores& scores, const Values& values) {
  const int shared_last = tile.first_last;
  scores(0, tile.n_tokens, tile.lo, shared_last);
  for (int t = 1; t < tile.n_tokens; t++) scores(t, t + 1, shared_last + 1, shared_last + t);
  SoftmaxRows(tile);
  values(0, tile.n_tokens, tile.lo, shared_last);
  for (int t = 1; t < tile.n_tokens; t++) values(t, t + 1, shared_last + 1, shared_last + t);
}

// A tile over a float or half cache.
template <typename E>
void AttendTile(const KvView& kv, const Tile& tile, float scale) {
  WalkTile(
      tile,
      [&](int t_lo, int t_hi, int p_lo, int p_hi) {
        TileScores<E>(kv, tile, t_lo, t_hi, p_lo, p_hi, scale);
      },
      [&](int t_lo, int t_hi, int p_lo, int p_hi) {
        TileValues<E>(kv, tile, t_lo, t_hi, p_lo, p_hi);
      });
}

// Calls attend(tile, scale) for the tiles of rows [rows) of a, in order: whole tokens from a
// token's first head while the range and the scores scratch hold them (at most max_tile_tokens,
// up to kAttentionTileTokens, and only tokens whose window starts at 0 together: a token whose
// window is cut is a tile of its own), else heads of one token. scale: ScoreDivisor(), the
// scores' divisor. Scores rows are indexed by position, whatever the window.
template <typename Attend>
void ForEachTile(const AttentionArgs& a, RowRange rows, int64_t max_tile_tokens, Attend&& attend) {
  const int64_t q_dim = a.QStride();
  const int kv_group = a.n_heads / a.n_kv_heads;  // query heads sharing one KV head
  const float scale = a.ScoreDivisor();
  // Floats per row of the scores scratch: padded off multiples of 512 B when the scratch has the
  // room, so a tile's rows (written 8 positions at a time, row after row) do not all fall in one
  // cache set at power-of-two context lengths.
  const int64_t length = a.start_pos + a.n_tokens;
  const int64_t padded = (length + 15) / 16 * 16 + 16;
  const bool pad = a.scores_size >= padded * kAttentionHeadsPerPass;
  const int64_t stride = pad ? padded : length;
  const int64_t scratch_rows = a.scores_size > 0 ? a.scores_size / stride : kAttentionHeadsPerPass;
  for (int r = rows.begin; r < rows.end;) {
    const int t = r / a.n_heads;
    const int h = r % a.n_heads;
    Tile tile;
    const int64_t whole = h == 0 && a.n_heads <= kMaxTileHeads ? (rows.end - r) / a.n_heads : 0;
    const int pos = a.start_pos + t;
    const int64_t same_lo = a.window == 0 ? whole : a.FirstPos(pos) > 0 ? 1 : a.window - pos;
    tile.n_tokens =
        static_cast<int>(std::min({whole, same_lo, scratch_rows / a.n_heads, max_tile_tokens}));
    if (tile.n_tokens >= 1) {
      tile.n_heads = a.n_heads;
    } else {
      tile.n_tokens = 1;
      tile.n_heads = static_cast<int>(std::min<int64_t>(
          {kMaxTileHeads, a.n_heads - h, rows.end - r, std::max<int64_t>(1, scratch_rows)}));
    }
    tile.q = a.q + t * q_dim + h * a.head_dim;
    tile.out = a.out + t * q_dim + h * a.head_dim;
    tile.q_dim = static_cast<int>(q_dim);
    for (int g = 0; g < tile.n_heads; g++) tile.kv_offset[g] = (h + g) / kv_group * a.head_dim;
    tile.head_dim = a.head_dim;
    tile.first_last = pos;
    tile.lo = a.FirstPos(pos);
    tile.softcap = a.softcap;
    tile.sinks = a.sinks != nullptr ? a.sinks + h : nullptr;
    tile.scores = a.scores;
    tile.stride = stride;
    attend(tile, scale);
    r += tile.n_tokens * tile.n_heads;
  }
}

}  // namespace smallmind::kernels::SMALLMIND_X86_NS::attention
