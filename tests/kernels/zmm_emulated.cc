// Built with -mavx2 -mfma -mf16c (tests/CMakeLists.txt): the shared kernel headers compile here
// into namespace zmm_emulated (SMALLMIND_X86_NS, kernels/x86/x86_util.h).
#define SMALLMIND_X86_NS zmm_emulated

#include "tests/kernels/zmm_emulated.h"

#include <immintrin.h>

#include <cstdint>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/avx512/x16_zmm.h"
#include "tests/kernels/emulated_dpbusd.h"
#include "tests/kernels/vnni_emulated.h"

namespace smallmind::kernels::zmm_emulated {
namespace {

// A 512-bit register as two 256-bit halves: lanes 0-7 in lo, 8-15 in hi (bytes 0-31 and 32-63).
struct PairI {
  __m256i lo, hi;
};
struct PairF {
  __m256 lo, hi;
};

struct Halves256 {
  using I = PairI;
  using F = PairF;
  static I Load(const uint8_t* p) {
    return {_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)),
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32))};
  }
  static I Set1(int32_t v) { return {_mm256_set1_epi32(v), _mm256_set1_epi32(v)}; }
  static F Set1(float v) { return {_mm256_set1_ps(v), _mm256_set1_ps(v)}; }
  static I LowNibbles(I v) {
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    return {_mm256_and_si256(v.lo, low4), _mm256_and_si256(v.hi, low4)};
  }
  static I HighNibbles(I v) {
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    return {_mm256_and_si256(_mm256_srli_epi16(v.lo, 4), low4),
            _mm256_and_si256(_mm256_srli_epi16(v.hi, 4), low4)};
  }
  static I DpBusd(I acc, I u, I s) {
    return {EmulatedDpBusd(acc.lo, u.lo, s.lo), EmulatedDpBusd(acc.hi, u.hi, s.hi)};
  }
  static F Halves(const uint16_t* h) { return {LoadHalves(h), LoadHalves(h + 8)}; }
  static F Floats(const float* f) { return {_mm256_loadu_ps(f), _mm256_loadu_ps(f + 8)}; }
  static I Table16(const uint8_t* p) {
    const __m256i t =
        _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return {t, t};
  }
  static I Lookup(I table, I idx) {
    return {_mm256_shuffle_epi8(table.lo, idx.lo), _mm256_shuffle_epi8(table.hi, idx.hi)};
  }
  static F Float(I v) { return {_mm256_cvtepi32_ps(v.lo), _mm256_cvtepi32_ps(v.hi)}; }
  static F Mul(F a, F b) { return {_mm256_mul_ps(a.lo, b.lo), _mm256_mul_ps(a.hi, b.hi)}; }
  static F Fma(F a, F b, F c) {
    return {_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi)};
  }
  static void Fence(I&) {}
};
static_assert(sizeof(Halves256::I) == 64 && sizeof(Halves256::F) == 64);

void MatmulQ8_0(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                RowRange rows) {
  MatmulX16<Q8_0x16u, Halves256, true>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulQ4_0(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                RowRange rows) {
  MatmulX16<Q4_0x16, Halves256, true>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

void MatmulIQ4_NL(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                  RowRange rows) {
  MatmulX16<IQ4_NLx16, Halves256, true>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}
void MatmulMXFP4(const void* w, const void* xq, float* y, int n_tokens, int in_dim, int out_dim,
                 RowRange rows) {
  MatmulX16<MXFP4x16, Halves256, true>(w, xq, y, n_tokens, in_dim, out_dim, rows);
}

}  // namespace
}  // namespace smallmind::kernels::zmm_emulated

namespace smallmind::kernels::testing {

void EmulatedMatmulQ8_0x16(const void* w, const void* xq, float* y, int n_tokens, int in_dim,
                           int out_dim, RowRange rows) {
  zmm_emulated::MatmulX16<zmm_emulated::Q8_0x16u, zmm_emulated::Halves256, false>(
      w, xq, y, n_tokens, in_dim, out_dim, rows);
}

KernelTable EmulatedZmmKernelTable(ExecMode mode) {
  // The real table is the AVX-512 one, its Q8_0, Q4_0, IQ4_NL and MXFP4 these kernels: here the
  // emulated VNNI one with these.
  KernelTable t = EmulatedVnniKernelTable(mode);
  t.matmul[WeightSlot(DType::kQ8_0)] =
      avx2::Q8_0x16uOp(&zmm_emulated::MatmulQ8_0, MatmulInput::kQ8Octets);
  t.matmul[WeightSlot(DType::kQ4_0)] =
      avx2::Q4_0x16Op(&zmm_emulated::MatmulQ4_0, MatmulInput::kQ8Octets);
  t.matmul[WeightSlot(DType::kIQ4_NL)] =
      MatmulOp{&zmm_emulated::MatmulIQ4_NL, MatmulInput::kQ8Octets, &avx2::PackIQ4_NLx16,
               &avx2::PackedLut4x16Bytes};
  t.matmul[WeightSlot(DType::kMXFP4)] = MatmulOp{&zmm_emulated::MatmulMXFP4, MatmulInput::kQ8Octets,
                                                 &avx2::PackMXFP4x16, &avx2::PackedLut4x16Bytes};
  return t;
}

}  // namespace smallmind::kernels::testing
