// QuantizeQ8OctetsAvx512: avx2::QuantizeQ8OctetsAvx2's bytes, a block of all 8 tokens of an octet
// at once. The AVX2 quantizer runs each token's block alone (QuantizeBlockQ8): a horizontal max,
// two scalar divisions, a horizontal sum, four scalar stores. Here the 8 tokens' |x| maxima and
// quant sums are each reduced together into one register of 8 (a shuffle tree: max and integer
// adds are exact, so their order does not matter), fp16(max / 127) and 127 / max are one vector
// division each for the 8 (IEEE division: the scalar's bits), and d, s = d * qsum and c = -128 *
// qsum go out as 8-lane stores. The quants are the AVX2 quantizer's: round-half-even(x * (127 /
// max)) to int32,
// narrowed with saturation (never reached: |q| <= 127), then the same 8 x 8 transpose of int32
// quads into the octet's rows.
//
// Built with -mavx512f/bw/vl/dq/vnni (kernels/CMakeLists.txt).
#define SMALLMIND_X86_NS avx512
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/avx512/kernels_avx512.h"
#include "kernels/q8_act.h"
#include "kernels/x86/x86_util.h"

// GCC 12's 512-bit intrinsics (_mm512_max_ps, _mm512_shuffle_f32x4, ...) pass an
// _mm512_undefined_* source that its flow analysis then calls maybe-uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace smallmind::kernels::avx512 {
namespace {

// a[j]: 16 partials of token j -> lane j of the result: `op` over a[j]'s lanes, by a shuffle tree
// (op must give the same whatever the order: max, integer add).
template <class Op>
inline __m256 Reduce8(const __m512* a, Op op) {
  __m512 c[4];  // c[p]: 8 partials of token 2p in its low half, of token 2p + 1 in its high half
  for (int p = 0; p < 4; p++) {
    c[p] = op(_mm512_shuffle_f32x4(a[2 * p], a[2 * p + 1], 0x44),
              _mm512_shuffle_f32x4(a[2 * p], a[2 * p + 1], 0xee));
  }
  __m512 d[2];  // d[h]: 4 partials of each of tokens 4h .. 4h + 3, one 128-bit quarter each
  for (int h = 0; h < 2; h++) {
    d[h] = op(_mm512_shuffle_f32x4(c[2 * h], c[2 * h + 1], 0x88),
              _mm512_shuffle_f32x4(c[2 * h], c[2 * h + 1], 0xdd));
  }
  // Quarter k: 2 partials of token k interleaved with 2 of token k + 4, then 1 of each.
  __m512 e = op(_mm512_unpacklo_ps(d[0], d[1]), _mm512_unpackhi_ps(d[0], d[1]));
  e = op(e, _mm512_permute_ps(e, 0x4e));
  // Token k at lane 4k, token k + 4 at lane 4k + 1.
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0);
  return _mm512_castps512_ps256(_mm512_permutexvar_ps(order, e));
}

inline __m512 Max(__m512 x, __m512 y) { return _mm512_max_ps(x, y); }
// Integer lanes carried in float registers (the shuffles move bits).
inline __m512 AddInts(__m512 x, __m512 y) {
  return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(x), _mm512_castps_si512(y)));
}

}  // namespace

void QuantizeQ8OctetsAvx512(const float* x, void* octets, int in_dim, int n_tokens, int first,
                            int last) {
  const int nb = in_dim / 32;
  const __m512 sign = _mm512_set1_ps(-0.0f);
  for (int o = first; o < last; o++) {
    const auto [q, d, s, c] = Q8ActOctetOutOf(octets, in_dim, o);
    const int n = std::min(kQ8ActOctet, n_tokens - o * kQ8ActOctet);
    const float* in = x + static_cast<int64_t>(o) * kQ8ActOctet * in_dim;  // token 8o's row
    for (int b = 0; b < nb; b++) {
      __m512 v[kQ8ActOctet][2], a[kQ8ActOctet];
      for (int j = 0; j < kQ8ActOctet; j++) {
        if (j < n) {  // lanes past the last token: zeros, read from nowhere
          const float* row = in + static_cast<int64_t>(j) * in_dim + 32 * b;
          v[j][0] = _mm512_loadu_ps(row);
          v[j][1] = _mm512_loadu_ps(row + 16);
        } else {
          v[j][0] = v[j][1] = _mm512_setzero_ps();
        }
        a[j] = _mm512_max_ps(_mm512_andnot_ps(sign, v[j][0]), _mm512_andnot_ps(sign, v[j][1]));
      }
      const __m256 max = Reduce8(a, Max);
      // d = fp16(max / 127) (vcvtps2ph rounds to nearest even: RoundToHalf's bits), id = 127 / max.
      const __m256 dj =
          _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_div_ps(max, _mm256_set1_ps(127.0f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      const __m256 id = _mm256_maskz_div_ps(
          _mm256_cmp_ps_mask(max, _mm256_setzero_ps(), _CMP_NEQ_UQ), _mm256_set1_ps(127.0f), max);
      const __m512 id16 = _mm512_castps256_ps512(id);
      __m256i r[kQ8ActOctet];
      __m512 sums[kQ8ActOctet];  // each token's int32 quant sums, 16 partials
      for (int j = 0; j < kQ8ActOctet; j++) {
        const __m512 idj = _mm512_permutexvar_ps(_mm512_set1_epi32(j), id16);
        const __m512i q0 = _mm512_cvtps_epi32(_mm512_roundscale_ps(
            _mm512_mul_ps(v[j][0], idj), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        const __m512i q1 = _mm512_cvtps_epi32(_mm512_roundscale_ps(
            _mm512_mul_ps(v[j][1], idj), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        r[j] = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm512_cvtsepi32_epi8(q0)),
                                       _mm512_cvtsepi32_epi8(q1), 1);
        sums[j] = _mm512_castsi512_ps(_mm512_add_epi32(q0, q1));
      }
      const __m256i qsum = _mm256_castps_si256(Reduce8(sums, AddInts));
      _mm256_storeu_ps(d + b * kQ8ActOctet, dj);
      _mm256_storeu_ps(s + b * kQ8ActOctet, _mm256_mul_ps(dj, _mm256_cvtepi32_ps(qsum)));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + b * kQ8ActOctet),
                          _mm256_mullo_epi32(qsum, _mm256_set1_epi32(-128)));
      Transpose8x8(r);
      for (int k = 0; k < 8; k++) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + (b * 8 + k) * kQ8ActOctet), r[k]);
      }
    }
  }
}

}  // namespace smallmind::kernels::avx512
