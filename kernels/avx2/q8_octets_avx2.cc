// QuantizeQ8OctetsAvx2: activations quantized straight into Q8 octets (kernels/q8_act.h) for the
// 512-bit Q8_0 / Q4_0 tiles. Per octet and block, the 8 tokens' blocks are quantized as the rows'
// quantizer does (QuantizeBlockQ8, the same bits), into 8 x 32 bytes on the stack, and one 8 x 8
// transpose of int32 quads turns them into the octet's 8 rows of quads. Quantizing into rows and
// packing those in a second pass cost ~75 us more a bench-110M step of 8 tokens (measured with
// decode_bench --op-profile: the second pass read back rows that had left L1 and wrote the octets
// after them).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/avx2/avx2_kernels.h"
#include "kernels/avx2/avx2_util.h"
#include "kernels/q8_act.h"

namespace smallmind::kernels::avx2 {
namespace {

// r[j] = quads 0-7 of token j -> r[k] = quad k of tokens 0-7.
inline void Transpose8x8(__m256i* r) {
  __m256i t[8], u[8];
  for (int i = 0; i < 4; i++) {
    t[2 * i] = _mm256_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  for (int h = 0; h < 2; h++) {  // tokens 0-3, then 4-7: per 128-bit lane quads k and k + 4
    u[4 * h + 0] = _mm256_unpacklo_epi64(t[4 * h + 0], t[4 * h + 2]);
    u[4 * h + 1] = _mm256_unpackhi_epi64(t[4 * h + 0], t[4 * h + 2]);
    u[4 * h + 2] = _mm256_unpacklo_epi64(t[4 * h + 1], t[4 * h + 3]);
    u[4 * h + 3] = _mm256_unpackhi_epi64(t[4 * h + 1], t[4 * h + 3]);
  }
  for (int k = 0; k < 4; k++) {
    r[k] = _mm256_permute2x128_si256(u[k], u[k + 4], 0x20);
    r[k + 4] = _mm256_permute2x128_si256(u[k], u[k + 4], 0x31);
  }
}

}  // namespace

void QuantizeQ8OctetsAvx2(const float* x, void* octets, int in_dim, int n_tokens, int first,
                          int last) {
  const int nb = in_dim / 32;
  for (int o = first; o < last; o++) {
    const auto [q, d, s, c] = Q8ActOctetOutOf(octets, in_dim, o);
    const int n = std::min(kQ8ActOctet, n_tokens - o * kQ8ActOctet);
    const float* in = x + static_cast<int64_t>(o) * kQ8ActOctet * in_dim;  // token 8o's row
    for (int b = 0; b < nb; b++) {
      alignas(32) int8_t qs[kQ8ActOctet][32];
      for (int j = 0; j < kQ8ActOctet; j++) {
        const int i = b * kQ8ActOctet + j;
        if (j < n) {
          int sum = 0;
          d[i] = QuantizeBlockQ8(in + static_cast<int64_t>(j) * in_dim + 32 * b, qs[j], &sum);
          s[i] = d[i] * static_cast<float>(sum);
          c[i] = -128 * sum;
        } else {
          _mm256_store_si256(reinterpret_cast<__m256i*>(qs[j]), _mm256_setzero_si256());
          d[i] = 0;
          s[i] = 0;
          c[i] = 0;
        }
      }
      __m256i r[kQ8ActOctet];
      for (int j = 0; j < kQ8ActOctet; j++) {
        r[j] = _mm256_load_si256(reinterpret_cast<const __m256i*>(qs[j]));
      }
      Transpose8x8(r);
      for (int k = 0; k < 8; k++) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + (b * 8 + k) * kQ8ActOctet), r[k]);
      }
    }
  }
}

}  // namespace smallmind::kernels::avx2
