// The tile shapes of the AVX2 Q8_0 / Q4_0 matmuls (1 group x 8 tokens, then 2 groups x 4 tokens
// for 4-7 tokens left, then the last 2-3 tokens as one 2-group tile or a last one 4 groups x 1
// token, in chunks of 4 groups; single-token decode 4 groups at a time over all rows) against
// each other: every token's row of y has the same bits whatever the batch size, its place in the
// batch and the row split, for in_dim from one block up to 5632 and out_dim that ends groups,
// pairs of groups and chunks early.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/dispatch.h"
#include "kernels/q8_act.h"
#include "tests/kernels/random_weights.h"

namespace smallmind::kernels {
namespace {

class Avx2Q8TilingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CpuSupports(Isa::kAvx2)) GTEST_SKIP() << "this CPU has no AVX2/FMA/F16C";
  }
};

struct Problem {
  const MatmulOp* op;
  std::vector<uint8_t> packed;  // the op's repacked weights
  std::vector<uint8_t> xq;      // [n_tokens] Q8 activation rows
  int n_tokens, in_dim, out_dim;
};

Problem Make(const KernelTable& table, DType type, int n_tokens, int in_dim, int out_dim,
             uint32_t seed) {
  Problem p{table.MatmulFor(type), {}, {}, n_tokens, in_dim, out_dim};
  const std::vector<uint8_t> w = testing::RandomWeights(type, out_dim, in_dim, seed);
  p.packed = testing::Pack(*p.op, w, out_dim, in_dim);
  const std::vector<float> x = testing::RandomFloats(size_t(n_tokens) * in_dim, seed + 1);
  p.xq.resize(n_tokens * Q8ActRowBytes(in_dim));
  table.quantize_q8(x.data(), p.xq.data(), in_dim, AllRows(n_tokens));
  return p;
}

// y for tokens [t0, t0 + n) of p, over `rows` only (the rest stays NaN).
std::vector<float> RunTokens(const Problem& p, int t0, int n, RowRange rows) {
  std::vector<float> y(size_t(n) * p.out_dim, NAN);
  const std::vector<uint8_t> x =
      testing::Q8InputFor(*p.op, p.xq.data() + t0 * Q8ActRowBytes(p.in_dim), n, p.in_dim);
  p.op->fn(p.packed.data(), x.data(), y.data(), n, p.in_dim, p.out_dim, rows);
  return y;
}

void ExpectRowsEqual(const std::vector<float>& a, int ta, const std::vector<float>& b, int tb,
                     int out_dim, RowRange rows, const std::string& what) {
  for (int r = rows.begin; r < rows.end; r++) {
    ASSERT_EQ(a[size_t(ta) * out_dim + r], b[size_t(tb) * out_dim + r]) << what << " r" << r;
  }
}

TEST_F(Avx2Q8TilingTest, EveryBatchSizeGivesEachTokenItsSingleTokenBits) {
  const KernelTable table = avx2::Avx2KernelTable(ExecMode::kParallel);
  for (DType type : {DType::kQ8_0, DType::kQ4_0}) {
    for (const auto& [in_dim, out_dim] :
         {std::pair{32, 40}, {96, 33}, {768, 56}, {2048, 24}, {64, 100}}) {
      const int max_tokens = 20;
      const Problem p = Make(table, type, max_tokens, in_dim, out_dim, 5);
      std::vector<std::vector<float>> single(max_tokens);
      for (int t = 0; t < max_tokens; t++) single[t] = RunTokens(p, t, 1, AllRows(out_dim));
      for (int n = 2; n <= max_tokens; n++) {
        // Batches that start at 0 and at 3, so a token lands in tiles and tails alike.
        for (int t0 : {0, 3}) {
          if (t0 + n > max_tokens) continue;
          const std::vector<float> batched = RunTokens(p, t0, n, AllRows(out_dim));
          for (int t = 0; t < n; t++) {
            ExpectRowsEqual(batched, t, single[t0 + t], 0, out_dim, AllRows(out_dim),
                            std::string(type == DType::kQ8_0 ? "Q8_0" : "Q4_0") + " in " +
                                std::to_string(in_dim) + " n " + std::to_string(n) + " t" +
                                std::to_string(t0 + t));
          }
        }
      }
    }
  }
}

TEST_F(Avx2Q8TilingTest, RowRangesAtAnyPlaceGiveTheSameBits) {
  const KernelTable table = avx2::Avx2KernelTable(ExecMode::kParallel);
  std::mt19937 rng(17);
  for (DType type : {DType::kQ8_0, DType::kQ4_0}) {
    for (int in_dim : {32, 160, 5632}) {
      const int out_dim = 120, n_tokens = 9;
      const Problem p = Make(table, type, n_tokens, in_dim, out_dim, rng());
      const std::vector<float> whole = RunTokens(p, 0, n_tokens, AllRows(out_dim));
      // 16-row ranges at odd offsets (the engine's kMatmulRowGroup) and ranges of any size.
      for (int trial = 0; trial < 12; trial++) {
        const int size = trial < 6 ? 16 : 1 + static_cast<int>(rng() % 40);
        const int begin = static_cast<int>(rng() % (out_dim - size + 1));
        const RowRange rows{begin, begin + size};
        for (int n : {1, 4, 5, n_tokens}) {
          const std::vector<float> part = RunTokens(p, 0, n, rows);
          for (int t = 0; t < n; t++) {
            ExpectRowsEqual(part, t, whole, t, out_dim, rows,
                            "in " + std::to_string(in_dim) + " rows " + std::to_string(begin) +
                                "+" + std::to_string(size) + " n " + std::to_string(n));
          }
          for (int r = 0; r < out_dim; r++) {  // nothing outside the range is written
            if (r < rows.begin || r >= rows.end) {
              ASSERT_TRUE(std::isnan(part[r])) << r;
            }
          }
        }
      }
    }
  }
}

TEST_F(Avx2Q8TilingTest, LongRowsOfBothFormatsStayBatchInvariant) {
  const KernelTable table = avx2::Avx2KernelTable(ExecMode::kParallel);
  for (DType type : {DType::kQ8_0, DType::kQ4_0}) {
    for (int in_dim : {32 * 187, 6016}) {  // odd and even block counts past 5632
      const int out_dim = 72, n_tokens = 6;
      const Problem p = Make(table, type, n_tokens, in_dim, out_dim, 29);
      const std::vector<float> batched = RunTokens(p, 0, n_tokens, AllRows(out_dim));
      for (int t = 0; t < n_tokens; t++) {
        ExpectRowsEqual(batched, t, RunTokens(p, t, 1, AllRows(out_dim)), 0, out_dim,
                        AllRows(out_dim),
                        "in " + std::to_string(in_dim) + " t" + std::to_string(t));
      }
    }
  }
}

}  // namespace
}  // namespace smallmind::kernels
