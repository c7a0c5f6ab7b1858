// AVX-VNNI matmuls over Q8 activations: the AVX2 kernels' packed layouts, walks, tiles and float
// steps (kernels/x86/q8_0x8.h, kquant_x8.h) on the VNNI integer cores
// (kernels/x86/vnni_cores.h) with the VEX vpdpbusd of CPUs that have AVX-VNNI without
// AVX-512. Same integers, so the same bits as the AVX2 kernels, on both paths.
//
// Built with -mavx2 -mfma -mf16c -mavxvnni (kernels/CMakeLists.txt): the shared headers compile
// here into namespace avx_vnni (SMALLMIND_X86_NS, kernels/x86/x86_util.h).
#define SMALLMIND_X86_NS avx_vnni

#include <immintrin.h>

#include "kernels/avx_vnni/kernels_avx_vnni.h"
#include "kernels/x86/kquant_x8.h"
#include "kernels/x86/q2_kx8.h"
#include "kernels/x86/q8_0x8.h"
#include "kernels/x86/vnni_cores.h"

namespace smallmind::kernels::avx_vnni {
namespace {

inline __m256i DpBusd(__m256i acc, __m256i u, __m256i s) {
  return _mm256_dpbusd_avx_epi32(acc, u, s);
}

}  // namespace

void MatmulQ8_0x8Q8AvxVnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                           int out_dim, RowRange rows) {
  MatmulQ8Packed<Q8_0x8u, VnniDots<&DpBusd>, true>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulQ4_0x8Q8AvxVnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                           int out_dim, RowRange rows) {
  MatmulQ8Packed<Q4_0x8, VnniDots<&DpBusd>, true>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulQ4_Kx8Q8AvxVnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                           int out_dim, RowRange rows) {
  MatmulKQuantPacked<Q4_Kx8, VnniCore<&DpBusd>>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulQ5_Kx8Q8AvxVnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                           int out_dim, RowRange rows) {
  MatmulKQuantPacked<Q5_Kx8, VnniCore<&DpBusd>>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulIQ4_XSx8Q8AvxVnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                             int out_dim, RowRange rows) {
  MatmulKQuantPacked<IQ4_XSx8, VnniCore<&DpBusd>>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulQ6_Kx8Q8AvxVnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                           int out_dim, RowRange rows) {
  MatmulKQuantPacked<Q6_Kx8, VnniCore<&DpBusd>>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulQ2_Kx8Q8AvxVnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                           int out_dim, RowRange rows) {
  MatmulKQuantPacked<Q2_Kx8, VnniCore<&DpBusd>>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

}  // namespace smallmind::kernels::avx_vnni
