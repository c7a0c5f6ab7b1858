// Q8 activation octets (kernels/q8_act.h): PackQ8ActOctetsRef puts each token's quad, scale, sum
// and VNNI start where the layout says and zeros in the lanes past the last token, for any token
// count and octet range; the AVX2 quantizer the engine runs writes the octets of its rows, and
// the AVX-512 one the AVX2 one's bytes. The Q8 row schemes are llama.cpp's q8_0, q8_1 and q8_K.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/avx512/kernels_avx512.h"
#include "kernels/dispatch.h"
#include "kernels/kernels.h"
#include "kernels/q8_act.h"
#include "kernels/quant_blocks.h"
#include "kernels/ref/quantize_ref.h"
#include "tests/kernels/random_weights.h"

namespace smallmind::kernels {
namespace {

std::vector<uint8_t> QuantizedRows(int n_tokens, int in_dim, uint32_t seed) {
  const std::vector<float> x = testing::RandomFloats(size_t(n_tokens) * in_dim, seed);
  std::vector<uint8_t> xq(n_tokens * Q8ActRowBytes(in_dim));
  QuantizeQ8ActRef(x.data(), xq.data(), in_dim, AllRows(n_tokens));
  return xq;
}

int32_t Int32At(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

TEST(Q8OctetsTest, EveryValueSitsWhereTheLayoutSaysAndPaddingIsZero) {
  for (int in_dim : {32, 96, 768}) {
    for (int n_tokens = 1; n_tokens <= 19; n_tokens++) {
      const std::vector<uint8_t> xq = QuantizedRows(n_tokens, in_dim, 3 + n_tokens);
      const int n_octets = (n_tokens + 7) / 8, nb = in_dim / 32;
      std::vector<uint8_t> octets(Q8ActOctetsBytes(n_tokens, in_dim), 0xAB);
      PackQ8ActOctetsRef(xq.data(), octets.data(), in_dim, n_tokens, 0, n_octets);
      for (int t = 0; t < n_octets * 8; t++) {
        const int o = t / 8, j = t % 8;
        // The layout spelled out: per octet q[nb][8][8], then d, s and c, each [nb][8].
        const auto* q = reinterpret_cast<const int32_t*>(octets.data()) +
                        size_t(o) * nb * 88;  // 64 + 3 * 8 words a block
        const auto* d = reinterpret_cast<const float*>(q + nb * 64);
        const float* s = d + nb * 8;
        const auto* c = reinterpret_cast<const int32_t*>(s + nb * 8);
        const Q8ActOctetLane lane = Q8ActOctetLaneOf(octets.data(), in_dim, t);
        const std::string what = "in " + std::to_string(in_dim) + " n " + std::to_string(n_tokens) +
                                 " t" + std::to_string(t);
        for (int b = 0; b < nb; b++) {
          const size_t i = size_t(b) * 8 + j;
          ASSERT_EQ(lane.d + b * 8, d + i) << what;
          ASSERT_EQ(lane.c + b * 8, c + i) << what;
          if (t >= n_tokens) {
            for (int k = 0; k < 8; k++) ASSERT_EQ(q[(b * 8 + k) * 8 + j], 0) << what;
            ASSERT_EQ(d[i], 0.0f) << what;
            ASSERT_EQ(s[i], 0.0f) << what;
            ASSERT_EQ(c[i], 0) << what;
            continue;
          }
          const uint8_t* row = xq.data() + Q8ActRowBytes(in_dim) * t;
          for (int k = 0; k < 8; k++) {
            ASSERT_EQ(q[(b * 8 + k) * 8 + j], Int32At(row + 32 * b + 4 * k))
                << what << " b" << b << " k" << k;
            ASSERT_EQ(lane.q + (b * 8 + k) * 8, q + (b * 8 + k) * 8 + j) << what;
          }
          ASSERT_EQ(d[i], Q8ActScales(row, in_dim)[b]) << what;
          ASSERT_EQ(s[i], Q8ActSums(row, in_dim)[b]) << what;
          ASSERT_EQ(c[i], -128 * Q8ActQuantSums(row, in_dim)[b]) << what;
        }
      }
    }
  }
}

TEST(Q8OctetsTest, TheAvx2QuantizerWritesTheOctetsOfItsRowsForEveryOctetRange) {
  if (!CpuSupports(Isa::kAvx2)) GTEST_SKIP() << "this CPU has no AVX2/FMA/F16C";
  ASSERT_EQ(avx2::Avx2KernelTable(ExecMode::kParallel).quantize_q8_octets,
            &avx2::QuantizeQ8OctetsAvx2);
  std::mt19937 rng(5);
  for (int trial = 0; trial < 40; trial++) {
    const int in_dim = 32 * (1 + static_cast<int>(rng() % 70));
    const int n_tokens = 1 + static_cast<int>(rng() % 40);
    const int n_octets = (n_tokens + 7) / 8;
    std::vector<float> x = testing::RandomFloats(size_t(n_tokens) * in_dim, rng());
    std::fill(x.begin(), x.begin() + 32, 0.0f);  // a block of zeros: d = 0
    std::vector<uint8_t> xq(n_tokens * Q8ActRowBytes(in_dim));
    avx2::QuantizeQ8Avx2(x.data(), xq.data(), in_dim, AllRows(n_tokens));
    std::vector<uint8_t> want(Q8ActOctetsBytes(n_tokens, in_dim), 0xCD), got(want);
    PackQ8ActOctetsRef(xq.data(), want.data(), in_dim, n_tokens, 0, n_octets);
    // In two ranges, as two threads quantize them.
    const int split = static_cast<int>(rng() % (n_octets + 1));
    avx2::QuantizeQ8OctetsAvx2(x.data(), got.data(), in_dim, n_tokens, 0, split);
    avx2::QuantizeQ8OctetsAvx2(x.data(), got.data(), in_dim, n_tokens, split, n_octets);
    ASSERT_EQ(got, want) << "in " << in_dim << " n " << n_tokens << " split " << split;
  }
}

TEST(Q8OctetsTest, TheAvx512QuantizerWritesTheAvx2QuantizersBytes) {
  if (!CpuSupports(Isa::kAvx512)) GTEST_SKIP() << "this CPU has no AVX-512 F/BW/DQ/VL + VNNI";
  ASSERT_EQ(avx512::Avx512KernelTable(ExecMode::kParallel).quantize_q8_octets,
            &avx512::QuantizeQ8OctetsAvx512);
  std::mt19937 rng(9);
  for (int trial = 0; trial < 200; trial++) {
    const int in_dim = 32 * (1 + static_cast<int>(rng() % 70));
    const int n_tokens = 1 + static_cast<int>(rng() % 40);
    const int n_octets = (n_tokens + 7) / 8;
    std::vector<float> x = testing::RandomFloats(size_t(n_tokens) * in_dim, rng());
    // Blocks of every kind: all zeros (d = 0), one nonzero value, signed zeros, tiny values (1 / d
    // huge), huge ones, values at half-way points of the quantization grid, rows of one value.
    for (size_t b = 0; b + 32 <= x.size(); b += 32) {
      float* blk = x.data() + b;
      switch (rng() % 10) {
        case 0: std::fill(blk, blk + 32, 0.0f); break;
        case 1: std::fill(blk, blk + 32, 0.0f), blk[rng() % 32] = -3.5f; break;
        case 2:
          for (int i = 0; i < 32; i++) blk[i] = i % 2 ? -0.0f : 0.0f;
          break;
        case 3:
          for (int i = 0; i < 32; i++) blk[i] *= 1e-30f;
          break;
        case 4:
          for (int i = 0; i < 32; i++) blk[i] *= 1e30f;
          break;
        case 5:
          for (int i = 0; i < 32; i++) blk[i] = (static_cast<int>(rng() % 255) - 127) + 0.5f;
          break;
        case 6: std::fill(blk, blk + 32, -1.25f); break;
        default: break;
      }
    }
    std::vector<uint8_t> want(Q8ActOctetsBytes(n_tokens, in_dim), 0xCD), got(want);
    avx2::QuantizeQ8OctetsAvx2(x.data(), want.data(), in_dim, n_tokens, 0, n_octets);
    const int split = static_cast<int>(rng() % (n_octets + 1));
    avx512::QuantizeQ8OctetsAvx512(x.data(), got.data(), in_dim, n_tokens, 0, split);
    avx512::QuantizeQ8OctetsAvx512(x.data(), got.data(), in_dim, n_tokens, split, n_octets);
    ASSERT_EQ(got, want) << "in " << in_dim << " n " << n_tokens << " split " << split;
  }
}

// The row fields of token 0 (kernels/q8_act.h).
struct Row0 {
  const int8_t* q;
  const float* d;
  const float* s;
  const int32_t* qsum;
};
Row0 Fields(const std::vector<uint8_t>& xq, int in_dim) {
  const auto* d = reinterpret_cast<const float*>(xq.data() + in_dim);
  return Row0{reinterpret_cast<const int8_t*>(xq.data()), d, d + in_dim / 32,
              reinterpret_cast<const int32_t*>(d + 2 * (in_dim / 32))};
}

TEST(Q8SchemesTest, Q8_0RowsAreLlamaCppsQ8_0WithTheScaleInHalfPrecision) {
  std::vector<float> x(64);
  for (int i = 0; i < 64; i++) x[i] = 0.3f * static_cast<float>(i % 17) - 2.1f;  // in [-2.1, 2.7]
  x[5] = 3.3f;  // the first block's amax; 3.3 / 127 is not a half
  std::vector<uint8_t> xq(Q8ActRowBytes(64));
  QuantizeQ8ActRef(x.data(), xq.data(), 64, AllRows(1));
  const Row0 r = Fields(xq, 64);
  EXPECT_EQ(r.d[0], Fp16ToFp32(Fp32ToFp16(3.3f / 127.0f)));
  EXPECT_NE(r.d[0], 3.3f / 127.0f);
  int sum = 0;
  for (int i = 0; i < 32; i++) {
    EXPECT_EQ(r.q[i], static_cast<int8_t>(std::nearbyint(x[i] * (127.0f / 3.3f)))) << i;
    sum += r.q[i];
  }
  EXPECT_EQ(r.q[5], 127);
  EXPECT_EQ(r.qsum[0], sum);
  EXPECT_EQ(r.s[0], r.d[0] * static_cast<float>(sum)) << "d * sum, exact";

  std::vector<uint8_t> xq1(Q8ActRowBytes(64));
  QuantizeQ8_1ActRef(x.data(), xq1.data(), 64, AllRows(1));
  const Row0 r1 = Fields(xq1, 64);
  EXPECT_EQ(r1.d[0], r.d[0]);
  EXPECT_EQ(std::memcmp(r1.q, r.q, 64), 0);
  EXPECT_EQ(r1.s[0], Fp16ToFp32(Fp32ToFp16((3.3f / 127.0f) * static_cast<float>(sum))))
      << "q8_1: s from the unrounded d, stored as a half";
}

TEST(Q8SchemesTest, Q8_KRowsShareOneScalePer256FromTheSignedMax) {
  std::vector<float> x(512);
  for (int i = 0; i < 512; i++) x[i] = 0.01f * static_cast<float>((i * 37) % 101) - 0.5f;
  x[300] = -4.0f;  // the second super-block's max by magnitude is negative
  x[310] = 4.0f;   // as large but later: the first one found wins
  std::vector<uint8_t> xq(Q8ActRowBytes(512));
  QuantizeQ8KActRef(x.data(), xq.data(), 512, AllRows(1));
  const Row0 r = Fields(xq, 512);
  for (int b = 8; b < 16; b++) EXPECT_EQ(r.d[b], 1.0f / (-127.0f / -4.0f)) << b;
  EXPECT_GT(r.d[8], 0.0f);
  EXPECT_EQ(r.q[300], -127);  // iscale = -127 / -4 > 0: the signs stay
  EXPECT_EQ(r.q[310], 127);
  float amax0 = 0.0f, max0 = 0.0f;
  for (int i = 0; i < 256; i++) {
    if (std::fabs(x[i]) > amax0) amax0 = std::fabs(x[i]), max0 = x[i];
  }
  for (int b = 0; b < 8; b++) EXPECT_EQ(r.d[b], 1.0f / (-127.0f / max0)) << b;
  for (int i = 0; i < 512; i++) {
    const float iscale = i < 256 ? -127.0f / max0 : -127.0f / -4.0f;
    EXPECT_EQ(r.q[i], std::min(127, static_cast<int>(std::nearbyint(iscale * x[i])))) << i;
    EXPECT_NEAR(r.q[i] * r.d[i / 32], x[i], std::fabs(r.d[i / 32])) << i;
  }
  const int16_t* sums16 = Q8ActSums16(xq.data(), 512);  // kQ8K: a sum per 16 in qsum's bytes
  for (int b = 0; b < 16; b++) {
    int sum = 0;
    for (int i = 0; i < 32; i++) sum += r.q[32 * b + i];
    for (int half = 0; half < 2; half++) {
      int sum16 = 0;
      for (int i = 0; i < 16; i++) sum16 += r.q[32 * b + 16 * half + i];
      EXPECT_EQ(sums16[2 * b + half], sum16) << b << " " << half;
    }
    EXPECT_EQ(r.s[b], r.d[b] * static_cast<float>(sum));
  }
  std::vector<float> zeros(256, 0.0f);
  std::vector<uint8_t> zq(Q8ActRowBytes(256), 0xAB);
  QuantizeQ8KActRef(zeros.data(), zq.data(), 256, AllRows(1));
  const Row0 z = Fields(zq, 256);
  for (int b = 0; b < 8; b++) EXPECT_EQ(z.d[b], 0.0f);
  for (int i = 0; i < 256; i++) EXPECT_EQ(z.q[i], 0);
}

}  // namespace
}  // namespace smallmind::kernels
