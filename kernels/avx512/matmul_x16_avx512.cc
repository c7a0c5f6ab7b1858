// MatmulQ8_0x16Q8Avx512, MatmulQ4_0x16Q8Avx512, MatmulIQ4_NLx16Q8Avx512 and MatmulMXFP4x16Q8Avx512:
// the 16-lane matmuls (x16_zmm.h) on AVX-512 registers.
//
// Built with -mavx512f/bw/vl/dq/vnni (kernels/CMakeLists.txt): the shared headers compile here
// into namespace avx512 (SMALLMIND_X86_NS, kernels/x86/x86_util.h).
#define SMALLMIND_X86_NS avx512

#include <immintrin.h>

#include <cstdint>

#include "kernels/avx512/kernels_avx512.h"
#include "kernels/avx512/x16_zmm.h"

// GCC 12's 512-bit conversion intrinsics (_mm512_cvtph_ps, _mm512_cvtepi32_ps) pass an
// _mm512_undefined_* source that its flow analysis then calls maybe-uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace smallmind::kernels::avx512 {
namespace {

struct Zmm {
  using I = __m512i;
  using F = __m512;
  static I Load(const uint8_t* p) { return _mm512_loadu_si512(p); }
  static I Set1(int32_t v) { return _mm512_set1_epi32(v); }
  static F Set1(float v) { return _mm512_set1_ps(v); }
  static I LowNibbles(I v) { return _mm512_and_si512(v, _mm512_set1_epi8(0x0f)); }
  static I HighNibbles(I v) {
    return _mm512_and_si512(_mm512_srli_epi16(v, 4), _mm512_set1_epi8(0x0f));
  }
  static I DpBusd(I acc, I u, I s) { return _mm512_dpbusd_epi32(acc, u, s); }
  static F Halves(const uint16_t* h) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(h)));
  }
  static F Floats(const float* f) { return _mm512_loadu_ps(f); }
  static I Table16(const uint8_t* p) {
    return _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static I Lookup(I table, I idx) { return _mm512_shuffle_epi8(table, idx); }
  static F Float(I v) { return _mm512_cvtepi32_ps(v); }
  static F Mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F Fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static void Fence(I& v) { asm("" : "+v"(v)); }
};

}  // namespace

void MatmulQ8_0x16Q8Avx512(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                           int out_dim, RowRange rows) {
  MatmulX16<Q8_0x16u, Zmm, true>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulQ8_0x16Q8RowsAvx512(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                               int out_dim, RowRange rows) {
  MatmulX16<Q8_0x16u, Zmm, false>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulQ4_0x16Q8Avx512(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                           int out_dim, RowRange rows) {
  MatmulX16<Q4_0x16, Zmm, true>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulIQ4_NLx16Q8Avx512(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                             int out_dim, RowRange rows) {
  MatmulX16<IQ4_NLx16, Zmm, true>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulMXFP4x16Q8Avx512(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                            int out_dim, RowRange rows) {
  MatmulX16<MXFP4x16, Zmm, true>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

}  // namespace smallmind::kernels::avx512
