// AVX-512 VNNI matmuls over Q8 activations with Q8_0 / Q4_0 weights packed 8 rows per group as
// the AVX2 kernels pack them (kernels/avx2/q8_0x8_avx2.h). One vpdpbusd (unsigned x signed bytes,
// 4 products summed into each int32 lane) replaces the AVX2 core's maddubs, int16 add and madd:
// Q4_0's nibbles are the unsigned side as they are; Q8_0 gives |w| and moves w's sign onto x, as
// the AVX2 core does. The products are exact and int32 does not overflow, so every block dot
// product, and from there every float step, is the AVX2 kernel's: the two give the same bits, on
// both paths. The 256-bit (EVEX) form keeps the AVX2 tiles, and with them the register budget
// and the clock a 512-bit loop would cost on some Intel parts.
//
// Built with -mavx512f/bw/vl/dq/vnni (kernels/CMakeLists.txt), so the shared AVX2 headers are
// compiled here into namespace avx512 (SMALLMIND_X86_NS, kernels/avx2/avx2_util.h).
#define SMALLMIND_X86_NS avx512

#include <immintrin.h>

#include <cstdint>

#include "kernels/avx2/avx2_util.h"
#include "kernels/avx2/q8_0x8_avx2.h"
#include "kernels/avx2/q8_rows_avx2.h"
#include "kernels/avx512/avx512_kernels.h"

namespace smallmind::kernels::avx512 {
namespace {

// Block b of G packed groups against T activation rows: isum[g][t] lane r = the exact dot product
// of group g's row r's 32 quants (Q4_0: the raw nibbles) with token t's.
struct VnniDots {
  template <int G, int T>
  static void Run(const Q4_0x8* const* grp, const XRow* x, int b, __m256i (*isum)[T]) {
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    for (int g = 0; g < G; g++) {
      for (int t = 0; t < T; t++) isum[g][t] = _mm256_setzero_si256();
    }
#pragma GCC unroll 4
    for (int m = 0; m < 4; m++) {
      for (int g = 0; g < G; g++) {
        const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(grp[g][b].qs[m]));
        const __m256i lo = _mm256_and_si256(w, low4);
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(w, 4), low4);
        for (int t = 0; t < T; t++) {
          const int8_t* q = x[t].qs + 32 * b + 4 * m;
          isum[g][t] = _mm256_dpbusd_epi32(isum[g][t], lo, Broadcast4(q));
          isum[g][t] = _mm256_dpbusd_epi32(isum[g][t], hi, Broadcast4(q + 16));
        }
      }
      Fence<G, T>(isum);
    }
  }

  template <int G, int T>
  static void Run(const Q8_0x8* const* grp, const XRow* x, int b, __m256i (*isum)[T]) {
    for (int g = 0; g < G; g++) {
      for (int t = 0; t < T; t++) isum[g][t] = _mm256_setzero_si256();
    }
#pragma GCC unroll 8
    for (int m = 0; m < 8; m++) {
      __m256i abs_w[G];  // vpdpbusd's unsigned side: |w| <= 128
      for (int g = 0; g < G; g++) {
        abs_w[g] =
            _mm256_abs_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(grp[g][b].qs[m])));
      }
      for (int t = 0; t < T; t++) {  // each broadcast serves the G groups
        const __m256i xb = Broadcast4(x[t].qs + 32 * b + 4 * m);
        for (int g = 0; g < G; g++) {
          const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(grp[g][b].qs[m]));
          isum[g][t] = _mm256_dpbusd_epi32(isum[g][t], abs_w[g], _mm256_sign_epi8(xb, w));
        }
      }
      Fence<G, T>(isum);
    }
  }
};

}  // namespace

void MatmulQ8_0x8Q8Vnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulQ8Packed<Q8_0x8, VnniDots>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulQ4_0x8Q8Vnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulQ8Packed<Q4_0x8, VnniDots>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

}  // namespace smallmind::kernels::avx512
