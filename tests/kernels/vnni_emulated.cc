// Built with -mavx2 -mfma -mf16c (tests/CMakeLists.txt): the shared kernel headers compile here
// into namespace vnni_emulated (SMALLMIND_X86_NS, kernels/x86/x86_util.h).
#define SMALLMIND_X86_NS vnni_emulated

#include "tests/kernels/vnni_emulated.h"

#include <immintrin.h>

#include <cstdint>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/x86/kquant_x8.h"
#include "kernels/x86/q2_kx8.h"
#include "kernels/x86/q8_0x8.h"
#include "kernels/x86/vnni_cores.h"
#include "tests/kernels/emulated_dpbusd.h"

namespace smallmind::kernels::vnni_emulated {
namespace {

void MatmulQ8_0(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                RowRange rows) {
  MatmulQ8Packed<Q8_0x8u, VnniDots<&EmulatedDpBusd>, true>(w, xq, y, n_tokens, in_dim, out_dim,
                                                           rows);
}
void MatmulQ4_0(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                RowRange rows) {
  MatmulQ8Packed<Q4_0x8, VnniDots<&EmulatedDpBusd>, true>(w, xq, y, n_tokens, in_dim, out_dim,
                                                          rows);
}
void MatmulQ4_K(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                RowRange rows) {
  MatmulKQuantPacked<Q4_Kx8, VnniCore<&EmulatedDpBusd>>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulQ5_K(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                RowRange rows) {
  MatmulKQuantPacked<Q5_Kx8, VnniCore<&EmulatedDpBusd>>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulIQ4_XS(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                  RowRange rows) {
  MatmulKQuantPacked<IQ4_XSx8, VnniCore<&EmulatedDpBusd>>(w, xq, y, n_tokens, in_dim, out_dim,
                                                          rows);
}
void MatmulQ6_K(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                RowRange rows) {
  MatmulKQuantPacked<Q6_Kx8, VnniCore<&EmulatedDpBusd>>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulQ2_K(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                RowRange rows) {
  MatmulKQuantPacked<Q2_Kx8, VnniCore<&EmulatedDpBusd>>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

}  // namespace
}  // namespace smallmind::kernels::vnni_emulated

namespace smallmind::kernels::testing {

KernelTable EmulatedVnniKernelTable(ExecMode mode) {
  namespace e = vnni_emulated;
  return avx2::WithVnniPackedMatmuls(
      avx2::Avx2KernelTable(mode), avx2::Q8_0x8uOp(&e::MatmulQ8_0),
      avx2::Q4_0x8Op(&e::MatmulQ4_0, MatmulInput::kQ8Octets),
      {&e::MatmulQ4_K, &e::MatmulQ5_K, &e::MatmulQ6_K, &e::MatmulIQ4_XS, &e::MatmulQ2_K});
}

}  // namespace smallmind::kernels::testing
