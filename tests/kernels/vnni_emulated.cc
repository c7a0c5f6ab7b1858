// Built with -mavx2 -mfma -mf16c (tests/CMakeLists.txt): the shared kernel headers compile here
// into namespace vnni_emulated (SMALLMIND_X86_NS, kernels/avx2/avx2_util.h).
#define SMALLMIND_X86_NS vnni_emulated

#include "tests/kernels/vnni_emulated.h"

#include <immintrin.h>

#include <cstdint>

#include "kernels/avx2/avx2_kernels.h"
#include "kernels/avx2/kquant_x8_avx2.h"
#include "kernels/avx2/q8_0x8_avx2.h"
#include "kernels/avx2/vnni_cores_avx2.h"

namespace smallmind::kernels::vnni_emulated {
namespace {

// vpdpbusd: each int32 lane of acc plus the 4 products of its unsigned bytes of u and signed
// bytes of s (wrapping, as the instruction does; the cores never come near it).
__m256i DpBusd(__m256i acc, __m256i u, __m256i s) {
  alignas(32) uint8_t ub[32];
  alignas(32) int8_t sb[32];
  alignas(32) int32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(ub), u);
  _mm256_store_si256(reinterpret_cast<__m256i*>(sb), s);
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc);
  for (int l = 0; l < 8; l++) {
    uint32_t sum = static_cast<uint32_t>(lanes[l]);
    for (int i = 0; i < 4; i++) sum += static_cast<uint32_t>(ub[4 * l + i] * sb[4 * l + i]);
    lanes[l] = static_cast<int32_t>(sum);
  }
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes));
}

void MatmulQ8_0(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                RowRange rows) {
  MatmulQ8Packed<Q8_0x8u, VnniDots<&DpBusd>>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulQ4_0(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                RowRange rows) {
  MatmulQ8Packed<Q4_0x8, VnniDots<&DpBusd>>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulQ4_K(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                RowRange rows) {
  MatmulKQuantPacked<Q4_Kx8, VnniCore<&DpBusd>>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulQ6_K(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                RowRange rows) {
  MatmulKQuantPacked<Q6_Kx8, VnniCore<&DpBusd>>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

}  // namespace
}  // namespace smallmind::kernels::vnni_emulated

namespace smallmind::kernels::testing {

KernelTable EmulatedVnniKernelTable(ExecMode mode) {
  namespace e = vnni_emulated;
  return avx2::WithVnniPackedMatmuls(avx2::Avx2KernelTable(mode), &e::MatmulQ8_0, &e::MatmulQ4_0,
                                     &e::MatmulQ4_K, &e::MatmulQ6_K);
}

}  // namespace smallmind::kernels::testing
