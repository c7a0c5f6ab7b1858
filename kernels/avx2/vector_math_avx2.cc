// AVX2 versions of kernels/vector_math.h (8 floats per step, tails by masked loads and stores).
#include <immintrin.h>

#include <limits>

#include "kernels/vector_math.h"
#include "kernels/x86/x86_util.h"

namespace smallmind::kernels::avx2 {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
// Exp() clamps its input here (e^x = 2^-127.5, a denormal); below it the result is flushed to 0,
// which also catches -inf (Exp would return the clamp's value, not 0) and NaN (unordered).
constexpr float kExpFloor = -88.3762626647949f;

// n (0..8) floats from p, -inf in the other lanes.
__m256 LoadTailNegInf(const float* p, int n) {
  const __m256i mask = TailMask(n);
  return _mm256_blendv_ps(_mm256_set1_ps(kNegInf), _mm256_maskload_ps(p, mask),
                          _mm256_castsi256_ps(mask));
}

// max_ps(v, acc) returns acc when v is NaN, so NaN never becomes the maximum.
float MaxValueAvx2(const float* x, int n) {
  __m256 acc0 = _mm256_set1_ps(kNegInf);
  __m256 acc1 = acc0;  // two chains hide the max latency
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_max_ps(_mm256_loadu_ps(x + i), acc0);
    acc1 = _mm256_max_ps(_mm256_loadu_ps(x + i + 8), acc1);
  }
  for (; i < n; i += 8) {
    const __m256 v = i + 8 <= n ? _mm256_loadu_ps(x + i) : LoadTailNegInf(x + i, n - i);
    acc0 = _mm256_max_ps(v, acc0);
  }
  acc0 = _mm256_max_ps(acc0, acc1);
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(acc0), _mm256_extractf128_ps(acc0, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

// The lowest i with x[i] == value (ordered compare), or n.
int FindFirstEqual(const float* x, int n, float value) {
  const __m256 target = _mm256_set1_ps(value);
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const int bits = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + i), target, _CMP_EQ_OQ));
    if (bits != 0) return i + __builtin_ctz(static_cast<unsigned>(bits));
  }
  for (; i < n; ++i) {
    if (x[i] == value) return i;
  }
  return n;
}

int ArgMaxAvx2(const float* x, int n) {
  const float best = MaxValueAvx2(x, n);
  if (!(best > kNegInf)) return 0;
  return FindFirstEqual(x, n, best);
}

int FindFirstGreaterAvx2(const float* x, int n, float threshold) {
  const __m256 t = _mm256_set1_ps(threshold);
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const int bits = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + i), t, _CMP_GT_OQ));
    if (bits != 0) return i + __builtin_ctz(static_cast<unsigned>(bits));
  }
  for (; i < n; ++i) {
    if (x[i] > threshold) return i;
  }
  return n;
}

__m256 ExpOfScaled8(__m256 x, __m256 shift, __m256 t) {
  const __m256 v = _mm256_div_ps(_mm256_sub_ps(x, shift), t);
  const __m256 keep = _mm256_cmp_ps(v, _mm256_set1_ps(kExpFloor), _CMP_GE_OQ);
  return _mm256_and_ps(Exp(v), keep);
}

void ExpOfScaledAvx2(const float* x, float* out, int n, float shift, float t) {
  const __m256 s = _mm256_set1_ps(shift);
  const __m256 tv = _mm256_set1_ps(t);
  int i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, ExpOfScaled8(_mm256_loadu_ps(x + i), s, tv));
  if (i < n) StoreTail(out + i, n - i, ExpOfScaled8(LoadTail(x + i, n - i), s, tv));
}

// Lanes 0-3 of each 8 in `lo`, 4-7 in `hi`: lane accumulator i % 8 as the header states. A tail
// loads zeros, and adding +0.0 leaves every lane's bits as the reference's skipped add does.
double SumToDoubleAvx2(const float* x, int n) {
  __m256d lo = _mm256_setzero_pd();
  __m256d hi = _mm256_setzero_pd();
  for (int i = 0; i < n; i += 8) {
    const __m256 v = i + 8 <= n ? _mm256_loadu_ps(x + i) : LoadTail(x + i, n - i);
    lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
  }
  alignas(32) double lane[8];
  _mm256_store_pd(lane, lo);
  _mm256_store_pd(lane + 4, hi);
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

}  // namespace

const VectorMathOps& VectorMathAvx2() {
  static constexpr VectorMathOps kOps = {MaxValueAvx2, ArgMaxAvx2, FindFirstGreaterAvx2,
                                         ExpOfScaledAvx2, SumToDoubleAvx2};
  return kOps;
}

}  // namespace smallmind::kernels::avx2
