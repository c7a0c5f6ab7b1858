// AVX-512 VNNI matmuls over Q8 activations: Q4_K, Q5_K and Q6_K weights packed 8 rows per group as
// the AVX2 kernels pack them, their walks, tiles and float steps (kernels/x86/kquant_x8.h) on the
// VNNI integer cores (kernels/x86/vnni_cores.h) with the EVEX vpdpbusd on 256-bit registers: one
// instruction per 32 multiply-adds where the AVX2 core takes a maddubs and an int16 add. Same
// integers, so the same bits as the AVX2 kernels, on both paths. Q8_0 and Q4_0 run on 512-bit
// registers (matmul_x16_avx512.cc); the K-quants could follow them (16-row layouts of their own).
//
// Built with -mavx512f/bw/vl/dq/vnni (kernels/CMakeLists.txt): the shared headers compile here
// into namespace avx512 (SMALLMIND_X86_NS, kernels/x86/x86_util.h).
#define SMALLMIND_X86_NS avx512

#include <immintrin.h>

#include "kernels/avx512/kernels_avx512.h"
#include "kernels/x86/kquant_x8.h"
#include "kernels/x86/q2_kx8.h"
#include "kernels/x86/vnni_cores.h"

namespace smallmind::kernels::avx512 {
namespace {

inline __m256i DpBusd(__m256i acc, __m256i u, __m256i s) { return _mm256_dpbusd_epi32(acc, u, s); }

}  // namespace

void MatmulQ4_Kx8Q8Vnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulKQuantPacked<Q4_Kx8, VnniCore<&DpBusd>>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulQ5_Kx8Q8Vnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulKQuantPacked<Q5_Kx8, VnniCore<&DpBusd>>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulIQ4_XSx8Q8Vnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                          int out_dim, RowRange rows) {
  MatmulKQuantPacked<IQ4_XSx8, VnniCore<&DpBusd>>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulQ6_Kx8Q8Vnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulKQuantPacked<Q6_Kx8, VnniCore<&DpBusd>>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulQ2_Kx8Q8Vnni(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                        int out_dim, RowRange rows) {
  MatmulKQuantPacked<Q2_Kx8, VnniCore<&DpBusd>>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

}  // namespace smallmind::kernels::avx512
