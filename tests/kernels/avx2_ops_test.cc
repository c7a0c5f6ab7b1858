// The AVX2 norm, element-wise, RoPE and attention kernels against their references over random
// shapes with odd sizes and tails: RoPE and the adds bitwise (same arithmetic), the others within
// the stated bounds (different summation order, polynomial exp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/dispatch.h"
#include "kernels/quant_blocks.h"
#include "kernels/ref/attention_ref.h"
#include "kernels/ref/elementwise_ref.h"
#include "kernels/ref/rmsnorm_ref.h"
#include "kernels/ref/rope_ref.h"
#include "kernels/ref/softmax_ref.h"
#include "tests/kernels/paged_attention.h"
#include "tests/kernels/random_weights.h"

namespace smallmind::kernels {
namespace {

using testing::Halves;
using testing::PagedArgs;
using testing::Q8Rows;
using testing::RandomFloats;
using testing::ScrambledTable;
using testing::UseHalves;
using testing::UseQ8;

// |got - want| <= rel * |want| + abs, element by element.
void ExpectClose(const std::vector<float>& got, const std::vector<float>& want, double rel,
                 double abs, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); i++) {
    EXPECT_NEAR(got[i], want[i], rel * std::fabs(want[i]) + abs) << what << " at " << i;
  }
}

class Avx2OpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CpuSupports(Isa::kAvx2)) GTEST_SKIP() << "this CPU has no AVX2/FMA/F16C";
  }
};

const int kWidths[] = {1, 3, 8, 13, 64, 100, 257};

TEST_F(Avx2OpsTest, RmsNormMatchesTheReferenceWithinAFewUlp) {
  for (int dim : kWidths) {
    const int n = 3;
    const std::vector<float> x = RandomFloats(size_t(n) * dim, dim, -4, 4);
    const std::vector<float> w = RandomFloats(dim, dim + 1);
    std::vector<float> got(x.size(), NAN), want(x.size(), NAN);
    avx2::RmsNormAvx2(x.data(), w.data(), got.data(), dim, 1e-5f, RowRange{1, 3});
    RmsNormRef(x.data(), w.data(), want.data(), dim, 1e-5f, RowRange{1, 3});
    EXPECT_TRUE(std::isnan(got[0]));  // token 0 is outside the range
    ExpectClose(std::vector<float>(got.begin() + dim, got.end()),
                std::vector<float>(want.begin() + dim, want.end()), 4e-7 * (1 + dim / 64), 0,
                "dim " + std::to_string(dim));
  }
}

TEST_F(Avx2OpsTest, SoftmaxMatchesTheReferenceWithinAFewUlp) {
  for (int len : kWidths) {
    std::vector<float> got = RandomFloats(size_t(2) * len, len, -20, 5), want = got;
    avx2::SoftmaxAvx2(got.data(), len, AllRows(2));
    SoftmaxRef(want.data(), len, AllRows(2));
    ExpectClose(got, want, 2e-6, 1e-12, "len " + std::to_string(len));
  }
}

TEST_F(Avx2OpsTest, SwiGluMatchesTheReferenceWithinAFewUlp) {
  for (int hidden : kWidths) {
    std::vector<float> got = RandomFloats(size_t(2) * hidden, hidden, -30, 30), want = got;
    const std::vector<float> up = RandomFloats(got.size(), hidden + 5);
    avx2::SwiGluAvx2(got.data(), up.data(), hidden, AllRows(2));
    SwiGluRef(want.data(), up.data(), hidden, AllRows(2));
    ExpectClose(got, want, 1e-6, 1e-30, "hidden " + std::to_string(hidden));
  }
}

// gpt-oss's clamped SwiGLU (alpha 1.702, limit 7): gates and ups well past the limit on both
// sides, so the clamps are exercised; a NaN gate stays NaN, as the reference's std::min keeps it.
TEST_F(Avx2OpsTest, SwiGluOaiMatchesTheReferenceWithinAFewUlp) {
  for (int hidden : kWidths) {
    std::vector<float> got = RandomFloats(size_t(2) * hidden, hidden, -30, 30), want = got;
    const std::vector<float> up = RandomFloats(got.size(), hidden + 5, -12, 12);
    if (hidden > 2) got[1] = want[1] = std::numeric_limits<float>::quiet_NaN();
    avx2::SwiGluOaiAvx2(got.data(), up.data(), hidden, 1.702f, 7.0f, AllRows(2));
    SwiGluOaiRef(want.data(), up.data(), hidden, 1.702f, 7.0f, AllRows(2));
    if (hidden > 2) {
      EXPECT_TRUE(std::isnan(got[1])) << "hidden " << hidden;
      got[1] = want[1] = 0.0f;
    }
    ExpectClose(got, want, 1e-6, 1e-30, "hidden " + std::to_string(hidden));
  }
}

TEST_F(Avx2OpsTest, AddsAreBitwiseTheReference) {
  for (int dim : kWidths) {
    std::vector<float> got = RandomFloats(size_t(3) * dim, dim), want = got;
    const std::vector<float> delta = RandomFloats(got.size(), dim + 9);
    avx2::AddAvx2(got.data(), delta.data(), dim, RowRange{0, 2});
    AddRef(want.data(), delta.data(), dim, RowRange{0, 2});
    avx2::AddBiasAvx2(got.data(), delta.data(), dim, RowRange{1, 3});
    AddBiasRef(want.data(), delta.data(), dim, RowRange{1, 3});
    EXPECT_EQ(got, want) << "dim " << dim;
  }
}

TEST_F(Avx2OpsTest, RopeIsBitwiseTheReferenceInBothLayouts) {
  for (RopeLayout layout : {RopeLayout::kInterleaved, RopeLayout::kNeox}) {
    for (int head_dim : {2, 6, 16, 18, 64, 128}) {
      const int n_tokens = 3, n_heads = 5;
      const std::vector<int32_t> positions = {0, 7, 1999};
      std::vector<float> got = RandomFloats(size_t(n_tokens) * n_heads * head_dim, head_dim);
      std::vector<float> want = got;
      avx2::RopeAvx2(got.data(), positions.data(), n_heads, head_dim, RopeFreqs{}, layout,
                     RowRange{2, 14});
      RopeRef(want.data(), positions.data(), n_heads, head_dim, RopeFreqs{}, layout,
              RowRange{2, 14});
      EXPECT_EQ(got, want) << "head_dim " << head_dim << " layout " << static_cast<int>(layout);
    }
  }
}

// RopeAvx2 keeps recent positions' angles per thread: calls that change theta or the head size at
// the same positions, or positions sharing a memo slot (64 apart), must still equal the reference,
// the second time round (from the memo) as the first.
TEST_F(Avx2OpsTest, RopeAnglesRememberedAcrossCallsStayBitwiseTheReference) {
  const std::vector<int32_t> positions = {5, 6, 69, 5};  // 5 and 69 share a memo slot
  const int n_heads = 3;
  for (int round = 0; round < 2; round++) {
    for (int head_dim : {64, 128, 32, 256}) {
      for (float theta : {10000.0f, 500000.0f, 10000.0f}) {  // same positions, another theta
        std::vector<float> got =
            RandomFloats(positions.size() * n_heads * head_dim, head_dim + round);
        std::vector<float> want = got;
        const RowRange all{0, static_cast<int>(positions.size()) * n_heads};
        avx2::RopeAvx2(got.data(), positions.data(), n_heads, head_dim, RopeFreqs{theta},
                       RopeLayout::kNeox, all);
        RopeRef(want.data(), positions.data(), n_heads, head_dim, RopeFreqs{theta},
                RopeLayout::kNeox, all);
        EXPECT_EQ(got, want) << "round " << round << " theta " << theta << " head_dim " << head_dim;
      }
    }
  }
}

// With rope_freqs factors and a linear scale the AVX2 angles (memoized or not) stay bitwise the
// reference's, and a call with other factors at the same positions does not reuse the memo's.
TEST_F(Avx2OpsTest, RopeWithFactorsAndScaleIsBitwiseTheReference) {
  const std::vector<int32_t> positions = {3, 200, 3};
  const int n_heads = 2;
  for (int head_dim : {64, 256}) {
    std::vector<float> factors_a(head_dim / 2), factors_b(head_dim / 2);
    for (int i = 0; i < head_dim / 2; i++) {
      factors_a[i] = 1.0f + static_cast<float>(i % 5);
      factors_b[i] = 32.0f / (1.0f + static_cast<float>(i % 3));
    }
    for (const RopeFreqs& freqs :
         {RopeFreqs{500000.0f, 1.0f, factors_a.data()},
          RopeFreqs{500000.0f, 1.0f, factors_b.data()},
          RopeFreqs{500000.0f, 0.5f, factors_b.data()}, RopeFreqs{500000.0f, 0.5f, nullptr}}) {
      for (RopeLayout layout : {RopeLayout::kInterleaved, RopeLayout::kNeox}) {
        std::vector<float> got = RandomFloats(positions.size() * n_heads * head_dim, head_dim);
        std::vector<float> want = got;
        const RowRange all{0, static_cast<int>(positions.size()) * n_heads};
        avx2::RopeAvx2(got.data(), positions.data(), n_heads, head_dim, freqs, layout, all);
        RopeRef(want.data(), positions.data(), n_heads, head_dim, freqs, layout, all);
        EXPECT_EQ(got, want) << "head_dim " << head_dim << " scale " << freqs.scale;
      }
    }
  }
}

// Partial rotary and an attention factor (phi3's LongRoPE): still bitwise the reference, the
// pass-through dims untouched, and the memo keyed by both.
TEST_F(Avx2OpsTest, RopeWithPartialRotaryAndMscaleIsBitwiseTheReference) {
  const std::vector<int32_t> positions = {2, 90, 2};
  const int n_heads = 3;
  for (int head_dim : {64, 96, 128}) {
    std::vector<float> factors(head_dim / 2);
    for (int i = 0; i < head_dim / 2; i++) factors[i] = 1.0f + 0.5f * static_cast<float>(i % 7);
    for (const RopeFreqs& freqs :
         {RopeFreqs{.rot_dims = head_dim * 3 / 4},
          RopeFreqs{.theta = 10000.0f,
          .factors = factors.data(),
          .rot_dims = head_dim * 3 / 4,
          .mscale = 1.19f},
          RopeFreqs{.rot_dims = head_dim / 4, .mscale = 1.19f}, RopeFreqs{.mscale = 0.9f}}) {
      for (RopeLayout layout : {RopeLayout::kInterleaved, RopeLayout::kNeox}) {
        std::vector<float> got = RandomFloats(positions.size() * n_heads * head_dim, head_dim);
        std::vector<float> want = got;
        const RowRange all{0, static_cast<int>(positions.size()) * n_heads};
        avx2::RopeAvx2(got.data(), positions.data(), n_heads, head_dim, freqs, layout, all);
        RopeRef(want.data(), positions.data(), n_heads, head_dim, freqs, layout, all);
        EXPECT_EQ(got, want) << "head_dim " << head_dim << " rot " << freqs.rot_dims << " mscale "
                             << freqs.mscale;
      }
    }
  }
}

// The output (out_size floats) of fn over every row of `a`.
std::vector<float> Attend(AttentionFn fn, AttentionArgs a, size_t out_size) {
  std::vector<float> out(out_size, NAN);
  a.out = out.data();
  fn(a, AllRows(a.n_tokens * a.n_heads));
  return out;
}

// Runs `a` (rows of n_tokens x n_heads, out of `out_size` floats) three ways: each row alone, a
// pass of one token's heads (the default scratch) and a tile of every token (a scratch of
// `scores_size` floats, room for all rows); each must give the same bits.
void ExpectAloneEqualsPassAndTile(AttentionArgs a, size_t out_size, int rows, int64_t scores_size,
                                  const std::string& what) {
  std::vector<float> alone(out_size, NAN), pass(out_size, NAN), tile(out_size, NAN);
  a.out = alone.data();
  for (int r = 0; r < rows; r++) avx2::AttentionAvx2(a, RowRange{r, r + 1});
  a.out = pass.data();
  a.scores_size = 0;
  avx2::AttentionAvx2(a, AllRows(rows));
  a.out = tile.data();
  a.scores_size = scores_size;
  avx2::AttentionAvx2(a, AllRows(rows));
  EXPECT_EQ(pass, alone) << what;
  EXPECT_EQ(tile, alone) << what;
}

// The cache, queries and args the "matches the reference" tests share: kTokens tokens from
// position kStartPos, kHeads query heads over n_kv_heads KV heads of head_dim, a float cache of
// kBlocks blocks of kBlockSize positions through a scrambled block table. Not copyable: `args`
// points into the vectors (whose contents a test may still change).
struct RefScenario {
  static constexpr int kHeads = 6, kBlockSize = 5, kBlocks = 12, kStartPos = 17, kTokens = 9;

  RefScenario(int head_dim, int n_kv_heads, uint32_t q_seed)
      : kv_dim(n_kv_heads * head_dim),
        storage(RandomFloats(size_t(kBlocks) * 2 * kBlockSize * kv_dim, head_dim)),
        table(ScrambledTable(kBlocks, 7, 3)),
        q(RandomFloats(size_t(kTokens) * kHeads * head_dim, q_seed, -2, 2)),
        scores(kAttentionHeadsPerPass * (kStartPos + kTokens)),
        args(PagedArgs(storage, table, q, &scores, kBlockSize, kHeads, n_kv_heads, head_dim,
                       kStartPos, kTokens)) {}
  RefScenario(const RefScenario&) = delete;
  RefScenario& operator=(const RefScenario&) = delete;

  // The output of fn over every row of `a` (args, or args reading another copy of the cache).
  std::vector<float> Run(AttentionFn fn, const AttentionArgs& a) const {
    return Attend(fn, a, q.size());
  }

  const int kv_dim;
  std::vector<float> storage;
  const std::vector<int32_t> table;
  const std::vector<float> q;
  std::vector<float> scores;
  const AttentionArgs args;
};

// Attention over a paged cache with a scrambled block table, GQA, several head sizes.
TEST_F(Avx2OpsTest, AttentionMatchesTheReferenceWithinAFewUlp) {
  std::mt19937 rng(5);
  for (int head_dim : {4, 8, 12, 40, 64, 128}) {
    const RefScenario c(head_dim, 2, rng());
    ExpectClose(c.Run(&avx2::AttentionAvx2, c.args), c.Run(&AttentionRef, c.args), 1e-5, 1e-6,
                "head_dim " + std::to_string(head_dim));
  }
}

// A head scored alone (a range of one row, one position at a time or 8) gets the bits it gets in a
// pass with the other heads of its token, or in a tile of several tokens sharing each cache row
// (a scratch that holds their rows), whatever the block size and the KV head sharing.
TEST_F(Avx2OpsTest, AttentionRowHasTheSameBitsAloneOrInAPass) {
  for (int block_size : {5, 16}) {
    for (int head_dim : {12, 64, 128}) {
      for (int n_kv_heads : {2, 6}) {
        const int n_heads = 6, kv_dim = n_kv_heads * head_dim;
        const int n_blocks = 8, start_pos = 37, n_tokens = 3;
        std::vector<float> storage =
            RandomFloats(size_t(n_blocks) * 2 * block_size * kv_dim, head_dim + block_size);
        const std::vector<int32_t> table = ScrambledTable(n_blocks, 5, 2);
        const std::vector<float> q = RandomFloats(size_t(n_tokens) * n_heads * head_dim, 9, -2, 2);
        const int64_t stride = start_pos + n_tokens;
        std::vector<float> scores(n_tokens * n_heads * stride);
        const AttentionArgs a = PagedArgs(storage, table, q, &scores, block_size, n_heads,
                                          n_kv_heads, head_dim, start_pos, n_tokens);
        ExpectAloneEqualsPassAndTile(
            a, q.size(), n_tokens * n_heads, static_cast<int64_t>(scores.size()),
            "block_size " + std::to_string(block_size) + " head_dim " + std::to_string(head_dim) +
                " kv_heads " + std::to_string(n_kv_heads));
      }
    }
  }
}

// A half cache reads each element exactly as its float: over a cache whose floats are halves
// already (rounded through Fp32ToFp16), f16 and f32 attention give the same bits, in the
// reference and in the AVX2 kernel, and the AVX2 kernel stays within a few ulp of the reference
// on halves as it does on floats.
TEST_F(Avx2OpsTest, HalfCacheAttentionIsTheFloatAttentionOfTheRoundedCache) {
  for (int head_dim : {4, 12, 64, 128}) {
    RefScenario c(head_dim, 2, 3);
    const std::vector<uint16_t> halves = Halves(c.storage);
    for (size_t i = 0; i < c.storage.size(); i++) c.storage[i] = Fp16ToFp32(halves[i]);
    AttentionArgs f16 = c.args;
    UseHalves(halves, RefScenario::kBlockSize, &f16);
    const std::string what = "head_dim " + std::to_string(head_dim);
    const std::vector<float> avx2_f16 = c.Run(&avx2::AttentionAvx2, f16);
    const std::vector<float> ref_f16 = c.Run(&AttentionRef, f16);
    EXPECT_EQ(avx2_f16, c.Run(&avx2::AttentionAvx2, c.args)) << what;
    EXPECT_EQ(ref_f16, c.Run(&AttentionRef, c.args)) << what;
    ExpectClose(avx2_f16, ref_f16, 1e-5, 1e-6, what);
  }
}

// A row of a half cache scored alone gets the bits it gets in a pass or a tile, as with floats.
TEST_F(Avx2OpsTest, HalfCacheAttentionRowHasTheSameBitsAloneOrInAPass) {
  const int n_heads = 6, n_kv_heads = 2, head_dim = 64, kv_dim = n_kv_heads * head_dim;
  const int block_size = 16, n_blocks = 8, start_pos = 37, n_tokens = 3;
  const std::vector<float> storage = RandomFloats(size_t(n_blocks) * 2 * block_size * kv_dim, 11);
  const std::vector<uint16_t> halves = Halves(storage);
  const std::vector<int32_t> table = ScrambledTable(n_blocks, 5, 2);
  const std::vector<float> q = RandomFloats(size_t(n_tokens) * n_heads * head_dim, 9, -2, 2);
  std::vector<float> scores(n_tokens * n_heads * (start_pos + n_tokens));
  AttentionArgs a = PagedArgs(storage, table, q, &scores, block_size, n_heads, n_kv_heads, head_dim,
                              start_pos, n_tokens);
  UseHalves(halves, block_size, &a);
  ExpectAloneEqualsPassAndTile(a, q.size(), n_tokens * n_heads, static_cast<int64_t>(scores.size()),
                               "halves");
}

// Quantizing K/V rows: the AVX2 kernel gives the reference's quants and scales (round half to
// even, a zero block, a block whose max is negative), and dequantizing loses at most half a step.
TEST_F(Avx2OpsTest, F32ToQ8IsBitwiseTheReference) {
  std::vector<float> x = RandomFloats(32 * 40, 6, -3, 3);
  for (int i = 0; i < 32; i++) x[32 + i] = 0.0f;                      // a zero block
  for (int i = 0; i < 32; i++) x[64 + i] = -127.0f + 0.5f * (i % 4);  // halves to round
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<int8_t> got_q(x.size()), want_q(x.size());
  std::vector<float> got_d(x.size() / 32), want_d(x.size() / 32);
  avx2::F32ToQ8Avx2(x.data(), got_q.data(), got_d.data(), n);
  F32ToQ8Ref(x.data(), want_q.data(), want_d.data(), n);
  EXPECT_EQ(got_q, want_q);
  EXPECT_EQ(got_d, want_d);
  EXPECT_EQ(want_d[1], 0.0f);
  EXPECT_EQ(want_q[64], -127);
  EXPECT_EQ(want_q[65], -126);  // -126.5 rounds to even
  for (size_t i = 0; i < x.size(); i++) {
    EXPECT_LE(std::fabs(want_q[i] * want_d[i / 32] - x[i]), 0.5f * want_d[i / 32] + 1e-6f) << i;
  }
}

// A kQ8 cache: the AVX2 kernel takes the reference's steps (integer dots, the same fma order; only
// the softmax differs), and both stay close to float attention of the unquantized cache.
TEST_F(Avx2OpsTest, Q8CacheAttentionMatchesTheReferenceAndTheFloatCache) {
  for (int head_dim : {32, 64, 128}) {
    for (int n_kv_heads : {2, 6}) {
      const RefScenario c(head_dim, n_kv_heads, 3);
      const std::vector<int8_t> q8 = Q8Rows(c.storage, c.kv_dim);
      AttentionArgs a = c.args;
      UseQ8(q8, RefScenario::kBlockSize, c.kv_dim, &a);
      const std::string what =
          "head_dim " + std::to_string(head_dim) + " kv_heads " + std::to_string(n_kv_heads);
      const std::vector<float> avx2_q8 = c.Run(&avx2::AttentionAvx2, a);
      const std::vector<float> ref_q8 = c.Run(&AttentionRef, a);
      ExpectClose(avx2_q8, ref_q8, 1e-5, 1e-6, what);
      ExpectClose(ref_q8, c.Run(&AttentionRef, c.args), 0, 0.03, what + " vs the float cache");
    }
  }
}

// A row of a kQ8 cache scored alone gets the bits it gets in a pass or a tile, as with floats.
TEST_F(Avx2OpsTest, Q8CacheAttentionRowHasTheSameBitsAloneOrInAPass) {
  for (int head_dim : {32, 64, 128}) {
    const int n_heads = 6, n_kv_heads = 2, kv_dim = n_kv_heads * head_dim;
    const int block_size = 16, n_blocks = 8, start_pos = 37, n_tokens = 3;
    const std::vector<float> storage = RandomFloats(size_t(n_blocks) * 2 * block_size * kv_dim, 11);
    const std::vector<int8_t> q8 = Q8Rows(storage, kv_dim);
    const std::vector<int32_t> table = ScrambledTable(n_blocks, 5, 2);
    const std::vector<float> q = RandomFloats(size_t(n_tokens) * n_heads * head_dim, 9, -2, 2);
    std::vector<float> scores(n_tokens * n_heads * (start_pos + n_tokens));
    AttentionArgs a = PagedArgs(storage, table, q, &scores, block_size, n_heads, n_kv_heads,
                                head_dim, start_pos, n_tokens);
    UseQ8(q8, block_size, kv_dim, &a);
    ExpectAloneEqualsPassAndTile(a, q.size(), n_tokens * n_heads,
                                 static_cast<int64_t>(scores.size()),
                                 "head_dim " + std::to_string(head_dim));
  }
}

// vcvtps2ph rounds exactly as Fp32ToFp16: ties to even, overflow to inf, subnormals, NaN, and
// a length that leaves a scalar tail.
TEST_F(Avx2OpsTest, F32ToF16IsBitwiseTheReference) {
  std::vector<float> x = RandomFloats(1003, 4, -70000, 70000);
  const std::vector<float> small = RandomFloats(200, 5, -1e-4f, 1e-4f);  // half subnormals
  x.insert(x.end(), small.begin(), small.end());
  for (float v : {0.0f, -0.0f, 1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 65504.0f, 65520.0f, 1e9f,
                  -1e9f, 0x1p-24f, 0x1p-25f, 0x1.8p-25f, INFINITY, -INFINITY, NAN}) {
    x.push_back(v);  // ties (1 + 2^-11 rounds down, 1 + 3 * 2^-11 up), the largest half, overflow
  }
  std::vector<uint16_t> got(x.size()), want(x.size());
  avx2::F32ToF16Avx2(x.data(), got.data(), static_cast<int64_t>(x.size()));
  F32ToF16Ref(x.data(), want.data(), static_cast<int64_t>(x.size()));
  EXPECT_EQ(got, want);
}

// A call over a run of KV heads (q, out and the cache from its first head, q_stride the model's)
// gives those heads' rows the bits the call over every head gives them: the reference, the AVX2
// kernel and, where the CPU has it, the AVX-512 one (OpRunner splits a short prefill chunk so).
TEST_F(Avx2OpsTest, AttentionOverARunOfKvHeadsGivesTheirRowsOfTheWholeCall) {
  const int n_heads = 6, n_kv_heads = 3, head_dim = 64, group = n_heads / n_kv_heads;
  const int kv_dim = n_kv_heads * head_dim, block_size = 16, n_blocks = 4;
  const int start_pos = 21, n_tokens = 11, q_dim = n_heads * head_dim;
  const std::vector<float> storage = RandomFloats(size_t(n_blocks) * 2 * block_size * kv_dim, 4);
  const std::vector<uint16_t> halves = Halves(storage);
  const std::vector<int32_t> table = ScrambledTable(n_blocks, 3, 1);
  const std::vector<float> q = RandomFloats(size_t(n_tokens) * q_dim, 6, -2, 2);
  std::vector<float> scores(size_t(n_tokens) * n_heads * (start_pos + n_tokens + 32));
  std::vector<AttentionFn> fns = {&AttentionRef, &avx2::AttentionAvx2};
  if (CpuSupports(Isa::kAvx512))
    fns.push_back(SelectKernels(Isa::kAvx512, ExecMode::kDeterministic).attention);
  for (bool half : {false, true}) {
    AttentionArgs all = PagedArgs(storage, table, q, &scores, block_size, n_heads, n_kv_heads,
                                  head_dim, start_pos, n_tokens);
    if (half) UseHalves(halves, block_size, &all);
    all.scores_size = static_cast<int64_t>(scores.size());
    for (AttentionFn fn : fns) {
      const std::vector<float> whole = Attend(fn, all, q.size());
      for (int first = 0; first < n_kv_heads; first++) {
        for (int end = first + 1; end <= n_kv_heads; end++) {
          std::vector<float> out(q.size(), NAN);
          AttentionArgs run = all;
          const int64_t offset = int64_t{first} * group * head_dim;
          run.q = q.data() + offset;
          run.out = out.data() + offset;
          run.q_stride = q_dim;
          run.n_kv_heads = end - first;
          run.n_heads = run.n_kv_heads * group;
          const int64_t bytes = int64_t{first} * head_dim * KvTypeBytes(all.kv.type);
          run.kv.k = static_cast<const char*>(all.kv.k) + bytes;
          run.kv.v = static_cast<const char*>(all.kv.v) + bytes;
          fn(run, AllRows(n_tokens * run.n_heads));
          for (int t = 0; t < n_tokens; t++) {
            for (int i = first * group * head_dim; i < end * group * head_dim; i++) {
              ASSERT_EQ(out[t * q_dim + i], whole[t * q_dim + i])
                  << (half ? "f16" : "f32") << " kv heads [" << first << ", " << end << ") token "
                  << t << " element " << i;
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace smallmind::kernels
