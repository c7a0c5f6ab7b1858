// QuantizeQ8OctetsAvx2: activations quantized straight into Q8 octets (kernels/q8_act.h) for the
// 512-bit Q8_0 / Q4_0 tiles. Per octet and block, the 8 tokens' blocks are quantized as the rows'
// quantizer does (QuantizeBlockQ8_0, the same bits), into 8 x 32 bytes on the stack, and one 8 x 8
// transpose of int32 quads turns them into the octet's 8 rows of quads. Quantizing into rows and
// packing those in a second pass cost ~75 us more a bench-110M step of 8 tokens (measured with
// decode_bench --op-profile: the second pass read back rows that had left L1 and wrote the octets
// after them).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/q8_act.h"
#include "kernels/x86/x86_util.h"

namespace smallmind::kernels::avx2 {

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
          float d_exact = 0.0f;
          d[i] = QuantizeBlockQ8_0(in + static_cast<int64_t>(j) * in_dim + 32 * b, qs[j], &sum,
                                   &d_exact);
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
