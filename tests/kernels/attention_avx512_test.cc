// The AVX-512 attention kernel gives the AVX2 kernel's bits for every row: float, half and kQ8
// caches, head sizes its packs take and ones it hands to the AVX2 kernel, query heads alone on
// their KV head or sharing one (packs of 1, 2, 3 and 4 rows), tiles of one token or of several (and
// the later tokens' own last positions), block sizes that cut the 8-position chunks short, and any
// split of the rows among calls. Runs where the CPU has AVX-512 (the kernel is not emulated).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/avx512/kernels_avx512.h"
#include "kernels/dispatch.h"
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

class AttentionAvx512Test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CpuSupports(Isa::kAvx512)) GTEST_SKIP() << "this CPU has no AVX-512 (F/BW/DQ/VL/VNNI)";
  }
};

struct Shape {
  int n_heads, n_kv_heads, head_dim;
};

// The output of fn over `a`'s rows in calls of the ranges [cuts[i], cuts[i + 1]).
std::vector<float> Attend(AttentionFn fn, AttentionArgs a, size_t out_size,
                          const std::vector<int>& cuts) {
  std::vector<float> out(out_size, NAN);
  a.out = out.data();
  for (size_t i = 0; i + 1 < cuts.size(); i++) fn(a, RowRange{cuts[i], cuts[i + 1]});
  return out;
}

// Row splits of `rows` rows of n_heads heads: one call, a call per token, three uneven calls.
std::vector<std::vector<int>> Splits(int rows, int n_heads) {
  std::vector<int> per_token;
  for (int r = 0; r <= rows; r += n_heads) per_token.push_back(r);
  return {{0, rows}, per_token, {0, rows / 3, rows - 1, rows}};
}

// The AVX-512 kernel's output against the AVX2 kernel's, bit for bit, over `a` (scores scratch of
// up to `scores_cap` floats) with no scratch size and the whole one, in every split of Splits.
void ExpectTheAvx2BitsInEverySplit(AttentionArgs a, int64_t scores_cap, size_t out_size,
                                   const std::string& what, int* checked) {
  const int rows = a.n_tokens * a.n_heads;
  for (int64_t scores_size : {int64_t{0}, scores_cap}) {
    a.scores_size = scores_size;
    for (const std::vector<int>& cuts : Splits(rows, a.n_heads)) {
      const std::string where = what + " scratch " + std::to_string(scores_size) + " calls " +
                                std::to_string(cuts.size() - 1);
      const std::vector<float> want = Attend(&avx2::AttentionAvx2, a, out_size, cuts);
      const std::vector<float> got = Attend(&avx512::AttentionAvx512, a, out_size, cuts);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < want.size(); i++) {
        ASSERT_FALSE(std::isnan(want[i])) << where << " at " << i;
        ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
            << where << " at " << i << ": " << got[i] << " vs " << want[i];
      }
      (*checked)++;
    }
  }
}

std::string ShapeText(const Shape& s, int block_size, int start_pos, int n_tokens) {
  return "heads " + std::to_string(s.n_heads) + "/" + std::to_string(s.n_kv_heads) + " head_dim " +
         std::to_string(s.head_dim) + " block " + std::to_string(block_size) + " from " +
         std::to_string(start_pos) + " tokens " + std::to_string(n_tokens);
}

TEST_F(AttentionAvx512Test, EveryRowHasTheAvx2KernelsBits) {
  const Shape shapes[] = {{6, 6, 64},   {6, 2, 64},  {6, 3, 8},  {8, 1, 24}, {12, 12, 72},
                          {32, 4, 128}, {4, 2, 256}, {6, 2, 12}, {4, 4, 320}};
  const int positions[][2] = {{0, 1}, {37, 1}, {37, 3}, {0, 8}, {20, 9}, {3, 17}};
  int checked = 0;
  for (const Shape& s : shapes) {
    for (int block_size : {5, 16}) {
      for (const auto& [start_pos, n_tokens] : positions) {
        const int kv_dim = s.n_kv_heads * s.head_dim;
        const int length = start_pos + n_tokens;
        const int n_blocks = (length + block_size - 1) / block_size + 1;
        const std::vector<float> storage =
            RandomFloats(size_t(n_blocks) * 2 * block_size * kv_dim, s.head_dim + block_size);
        const std::vector<uint16_t> halves = Halves(storage);
        const std::vector<int32_t> table = ScrambledTable(n_blocks, n_blocks % 3 == 0 ? 5 : 3, 1);
        const std::vector<float> q =
            RandomFloats(size_t(n_tokens) * s.n_heads * s.head_dim, 7 + n_tokens, -2, 2);
        const int rows = n_tokens * s.n_heads;
        // Room for every row (tiles of whole tokens) and the kernels' default pass.
        std::vector<float> scores(size_t(rows + kAttentionHeadsPerPass) * (length + 32));
        for (bool half : {false, true}) {
          AttentionArgs a = PagedArgs(storage, table, q, &scores, block_size, s.n_heads,
                                      s.n_kv_heads, s.head_dim, start_pos, n_tokens);
          if (half) UseHalves(halves, block_size, &a);
          ExpectTheAvx2BitsInEverySplit(
              a, static_cast<int64_t>(scores.size()), q.size(),
              ShapeText(s, block_size, start_pos, n_tokens) + (half ? " f16" : " f32"), &checked);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
  EXPECT_EQ(checked, 9 * 2 * 6 * 2 * 2 * 3);
}

// A kQ8 cache likewise: packs of 1-4 rows on one KV head (GQA groups, a prefill tile's tokens),
// rows alone on theirs (the AVX2 walk), head sizes of one to eight quant blocks, extreme quants
// (every query and cache value at +-max, so the unsigned dots reach their largest sums).
TEST_F(AttentionAvx512Test, Q8CacheRowsHaveTheAvx2KernelsBits) {
  const Shape shapes[] = {{6, 6, 64},   {6, 2, 64},  {6, 3, 32},  {8, 1, 32}, {12, 12, 64},
                          {32, 4, 128}, {4, 2, 256}, {12, 4, 96}, {5, 5, 160}};
  const int positions[][2] = {{0, 1}, {37, 1}, {37, 3}, {0, 8}, {20, 9}, {3, 17}};
  int checked = 0;
  for (const Shape& s : shapes) {
    for (int block_size : {5, 16}) {
      for (const auto& [start_pos, n_tokens] : positions) {
        for (bool extreme : {false, true}) {
          const int kv_dim = s.n_kv_heads * s.head_dim;
          const int length = start_pos + n_tokens;
          const int n_blocks = (length + block_size - 1) / block_size + 1;
          std::vector<float> storage =
              RandomFloats(size_t(n_blocks) * 2 * block_size * kv_dim, s.head_dim + block_size);
          std::vector<float> q =
              RandomFloats(size_t(n_tokens) * s.n_heads * s.head_dim, 7 + n_tokens, -2, 2);
          if (extreme) {  // every quant at +-127
            for (float& x : storage) x = x < 0 ? -1.0f : 1.0f;
            for (float& x : q) x = x < 0 ? -2.0f : 2.0f;
          }
          const std::vector<int8_t> q8 = Q8Rows(storage, kv_dim);
          const std::vector<int32_t> table = ScrambledTable(n_blocks, n_blocks % 3 == 0 ? 5 : 3, 1);
          const int rows = n_tokens * s.n_heads;
          std::vector<float> scores(size_t(rows + kAttentionHeadsPerPass) * (length + 32));
          AttentionArgs a = PagedArgs(storage, table, q, &scores, block_size, s.n_heads,
                                      s.n_kv_heads, s.head_dim, start_pos, n_tokens);
          UseQ8(q8, block_size, kv_dim, &a);
          ExpectTheAvx2BitsInEverySplit(
              a, static_cast<int64_t>(scores.size()), q.size(),
              ShapeText(s, block_size, start_pos, n_tokens) + (extreme ? " extreme" : ""),
              &checked);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
  EXPECT_EQ(checked, 9 * 2 * 6 * 2 * 2 * 3);
}

// The avx512 table (and so the AMX one built on it) runs this kernel.
TEST_F(AttentionAvx512Test, TheAvx512TableRunsIt) {
  for (ExecMode mode : {ExecMode::kDeterministic, ExecMode::kParallel}) {
    EXPECT_EQ(SelectKernels(Isa::kAvx512, mode).attention, &avx512::AttentionAvx512);
  }
}

}  // namespace
}  // namespace smallmind::kernels
