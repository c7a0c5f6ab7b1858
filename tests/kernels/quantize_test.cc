// Q8 activation octets (kernels/q8_act.h): PackQ8ActOctetsRef puts each token's quad, scale, sum
// and VNNI start where the layout says and zeros in the lanes past the last token, for any token
// count and octet range; the AVX2 quantizer the engine runs writes the octets of its rows, and
// the AVX-512 one the AVX2 one's bytes.
#include <gtest/gtest.h>

#include <algorithm>
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

}  // namespace
}  // namespace smallmind::kernels
