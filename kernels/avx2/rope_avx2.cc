// AVX2 RoPE: each token's angles are computed once (the reference's float formula, so bitwise the
// same cos/sin) and applied to all its heads in the row range with separate multiplies and adds,
// as the reference does, so the result is bitwise RopeRef's; a partial rotary head rotates its
// first RopeDims() dims as a head of that width and leaves the rest.
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/ref/rope_ref.h"

namespace smallmind::kernels::avx2 {
namespace {

constexpr int kMaxHalf = 512;  // head_dim <= 1024; larger heads take the scalar path

// cos/sin (times mscale) of pos * RopeFrequency(j) for the n / 2 pairs of the n rotated dims,
// in pair order; j as RopeRef.
void Angles(int pos, int n, const RopeFreqs& freqs, float* cos_out, float* sin_out) {
  for (int i = 0; i < n / 2; i++) {
    const int j = 2 * i;  // the frequency index of pair i in both layouts
    RopeCosSin(pos * RopeFrequency(j, n, freqs), freqs, &cos_out[i], &sin_out[i]);
  }
}

// Pairs (2i, 2i+1): out = x * [c, c] + swap(x) * [-s, s].
void RotateInterleaved(float* head, int head_dim, const float* c, const float* s) {
  int i = 0;
  for (; 2 * i + 8 <= head_dim; i += 4) {
    const __m128 c4 = _mm_loadu_ps(c + i), s4 = _mm_loadu_ps(s + i);
    const __m256 cc = _mm256_set_m128(_mm_unpackhi_ps(c4, c4), _mm_unpacklo_ps(c4, c4));
    const __m256 ss = _mm256_set_m128(_mm_unpackhi_ps(s4, s4), _mm_unpacklo_ps(s4, s4));
    const __m256 v = _mm256_loadu_ps(head + 2 * i);
    const __m256 swapped = _mm256_permute_ps(v, 0xb1);  // [x1, x0, x3, x2, ...]
    const __m256 a = _mm256_mul_ps(v, cc);
    const __m256 b = _mm256_mul_ps(swapped, ss);
    // Even lanes a - b (x0 c - x1 s), odd lanes a + b (x1 c + x0 s).
    _mm256_storeu_ps(head + 2 * i, _mm256_addsub_ps(a, b));
  }
  for (; 2 * i < head_dim; i++) {
    const float v0 = head[2 * i], v1 = head[2 * i + 1];
    head[2 * i] = v0 * c[i] - v1 * s[i];
    head[2 * i + 1] = v0 * s[i] + v1 * c[i];
  }
}

// Pairs (i, i + half).
void RotateNeox(float* head, int head_dim, const float* c, const float* s) {
  const int half = head_dim / 2;
  int i = 0;
  for (; i + 8 <= half; i += 8) {
    const __m256 cv = _mm256_loadu_ps(c + i), sv = _mm256_loadu_ps(s + i);
    const __m256 v0 = _mm256_loadu_ps(head + i), v1 = _mm256_loadu_ps(head + half + i);
    _mm256_storeu_ps(head + i, _mm256_sub_ps(_mm256_mul_ps(v0, cv), _mm256_mul_ps(v1, sv)));
    _mm256_storeu_ps(head + half + i, _mm256_add_ps(_mm256_mul_ps(v0, sv), _mm256_mul_ps(v1, cv)));
  }
  for (; i < half; i++) {
    const float v0 = head[i], v1 = head[half + i];
    head[i] = v0 * c[i] - v1 * s[i];
    head[half + i] = v0 * s[i] + v1 * c[i];
  }
}

// The angles of the last positions this thread computed, by position (direct-mapped): a step
// rotates q and k of every layer at the same positions, so all but the first of its 2 x n_layers
// calls find them here instead of recomputing head_dim / 2 pow, cos and sin per token. A memo of
// a pure function (keyed by everything Angles reads): the values are bitwise the recomputed ones.
// 256 slots, so a thread's share of a prefill chunk of up to 256 tokens (the worker's default
// --max-step-tokens) keeps all its positions; with 64, a 128-token chunk on one thread evicted
// every position before the next call read it (Zen 5 VM: kernels_bench
// BM_Rope/avx512/32x64/tokens:128 on one core 79-80 -> 30 us; decode_bench pp128 on 1 thread,
// bench-110M Q8_0, small_us 4.12-4.28 -> 2.91-3.04 ms). All zeros when empty (key 0), so the
// 144 KB of each thread's copy are zero-filled thread storage, not an initial image; a heap copy
// made on a thread's first call would be an allocation inside the engine's first step. Entries
// on cache lines of their own: at 528 bytes apart the c/s loads straddled lines (30 -> 39 us).
class AngleMemo {
 public:
  static constexpr int kMaxMemoHalf = 64;  // heads up to 128 dims are memoized

  // c and s of `pos` for n rotated dims: from the memo, or computed into it.
  void Get(int pos, int n, const RopeFreqs& freqs, const float** c, const float** s) {
    Entry& e = entries_[static_cast<unsigned>(pos) % kSlots];
    const int64_t key = int64_t{pos} + 1;
    if (e.key != key || e.head_dim != n || e.theta != freqs.theta || e.scale != freqs.scale ||
        e.factors != freqs.factors || e.mscale != freqs.mscale) {
      Angles(pos, n, freqs, e.c, e.s);
      e.key = key;
      e.head_dim = n;
      e.theta = freqs.theta;
      e.scale = freqs.scale;
      e.factors = freqs.factors;
      e.mscale = freqs.mscale;
    }
    *c = e.c;
    *s = e.s;
  }

 private:
  static constexpr int kSlots = 256;
  struct alignas(64) Entry {
    float c[kMaxMemoHalf];
    float s[kMaxMemoHalf];
    int64_t key;   // position + 1; 0: empty
    int head_dim;  // the rotated dims
    float theta;
    float scale;
    float mscale;
    // The factors by address: a model's rope_freqs tensor does not change while it is loaded.
    const float* factors;
  };
  Entry entries_[kSlots];
};

thread_local AngleMemo angle_memo;

}  // namespace

void RopeAvx2(float* x, const int32_t* positions, int n_heads, int head_dim, const RopeFreqs& freqs,
              RopeLayout layout, RowRange rows) {
  float own_c[kMaxHalf], own_s[kMaxHalf];  // angles of heads too large for the memo
  const float* c = own_c;
  const float* s = own_s;
  int angles_of = -1;                       // the token c and s belong to
  const int n = RopeDims(head_dim, freqs);  // rotated dims of each head; the rest pass through
  for (int r = rows.begin; r < rows.end; r++) {
    const int t = r / n_heads;
    if (n / 2 > kMaxHalf) {
      RopeRef(x, positions, n_heads, head_dim, freqs, layout, RowRange{r, r + 1});
      continue;
    }
    if (t != angles_of) {
      if (n / 2 <= AngleMemo::kMaxMemoHalf) {
        angle_memo.Get(positions[t], n, freqs, &c, &s);
      } else {
        Angles(positions[t], n, freqs, own_c, own_s);
      }
      angles_of = t;
    }
    float* head = x + static_cast<int64_t>(r) * head_dim;  // [head_dim], [0, n) rotated
    if (layout == RopeLayout::kInterleaved) {
      RotateInterleaved(head, n, c, s);
    } else {
      RotateNeox(head, n, c, s);
    }
  }
}

}  // namespace smallmind::kernels::avx2
