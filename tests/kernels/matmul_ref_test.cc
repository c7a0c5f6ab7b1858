#include "kernels/ref/matmul_ref.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/random_weights.h"

namespace smallmind::kernels {
namespace {

std::vector<float> RandomVector(size_t n, uint32_t seed) { return testing::RandomFloats(n, seed); }

TEST(MatmulRefTest, ComputesOneDotProductPerWeightRow) {
  // w: [2, 3], x: [2 tokens, 3]
  const std::vector<float> w = {1, 2, 3, -1, 0.5f, 0};
  const std::vector<float> x = {1, 1, 1, 2, -2, 4};
  std::vector<float> y(4, -7.0f);
  MatmulF32Ref(w.data(), x.data(), y.data(), 2, 3, 2, AllRows(2));
  EXPECT_EQ(y, (std::vector<float>{6, -0.5f, 10, -3}));
}

TEST(MatmulRefTest, MatchesFloat64ReferenceOnRandomShapes) {
  const int in_dim = 67, out_dim = 19, n_tokens = 5;
  const std::vector<float> w = RandomVector(out_dim * in_dim, 1);
  const std::vector<float> x = RandomVector(n_tokens * in_dim, 2);
  std::vector<float> y(n_tokens * out_dim);
  MatmulF32Ref(w.data(), x.data(), y.data(), n_tokens, in_dim, out_dim, AllRows(out_dim));
  for (int t = 0; t < n_tokens; t++) {
    for (int r = 0; r < out_dim; r++) {
      double want = 0;
      for (int j = 0; j < in_dim; j++) want += double{w[r * in_dim + j]} * x[t * in_dim + j];
      EXPECT_NEAR(y[t * out_dim + r], want, 1e-5) << "token " << t << " row " << r;
    }
  }
}

TEST(MatmulRefTest, WritesOnlyTheRowsOfItsRange) {
  const int in_dim = 8, out_dim = 6, n_tokens = 2;
  const std::vector<float> w = RandomVector(out_dim * in_dim, 3);
  const std::vector<float> x = RandomVector(n_tokens * in_dim, 4);
  std::vector<float> y(n_tokens * out_dim, 42.0f);
  MatmulF32Ref(w.data(), x.data(), y.data(), n_tokens, in_dim, out_dim, RowRange{2, 4});
  for (int t = 0; t < n_tokens; t++) {
    for (int r = 0; r < out_dim; r++) {
      const bool inside = r >= 2 && r < 4;
      EXPECT_EQ(y[t * out_dim + r] == 42.0f, !inside) << "token " << t << " row " << r;
    }
  }
}

TEST(MatmulRefTest, GivesBitwiseTheSameRowWhateverTheBatchAndSplit) {
  const int in_dim = 96, out_dim = 10, n_tokens = 3;
  const std::vector<float> w = RandomVector(out_dim * in_dim, 5);
  const std::vector<float> x = RandomVector(n_tokens * in_dim, 6);
  std::vector<float> batched(n_tokens * out_dim);
  for (int part = 0; part < 3; part++) {
    MatmulF32Ref(w.data(), x.data(), batched.data(), n_tokens, in_dim, out_dim,
                 StaticRows(out_dim, 3, part));
  }
  for (int t = 0; t < n_tokens; t++) {
    std::vector<float> single(out_dim);
    MatmulF32Ref(w.data(), x.data() + t * in_dim, single.data(), 1, in_dim, out_dim,
                 AllRows(out_dim));
    for (int r = 0; r < out_dim; r++) EXPECT_EQ(single[r], batched[t * out_dim + r]);
  }
}

// Every typed reference matmul is, bit for bit, the F32 reference matmul over its dequantized
// weights: the same products in the same order.
TEST(MatmulRefTest, EveryWeightTypeEqualsDequantizeThenF32MatmulBitwise) {
  const KernelTable ref = RefKernelTable();
  for (DType type : kWeightTypes) {
    const int block = GetDTypeTraits(static_cast<uint32_t>(type))->block_elems;
    const int in_dim = block == 1 ? 72 : 2 * (block == 32 ? 96 : 256);
    const int out_dim = 11, n_tokens = 3;
    const std::vector<uint8_t> w = testing::RandomWeights(type, out_dim, in_dim, 10);
    const std::vector<float> wf = testing::DequantizeAll(type, w, out_dim, in_dim);
    const std::vector<float> x = RandomVector(n_tokens * in_dim, 11);
    std::vector<float> want(n_tokens * out_dim), got(n_tokens * out_dim, -1.0f);
    MatmulF32Ref(wf.data(), x.data(), want.data(), n_tokens, in_dim, out_dim, AllRows(out_dim));
    const MatmulOp* op = ref.MatmulFor(type);
    ASSERT_NE(op, nullptr) << GetDTypeTraits(static_cast<uint32_t>(type))->name;
    EXPECT_EQ(op->input, MatmulInput::kF32);
    op->fn(w.data(), x.data(), got.data(), n_tokens, in_dim, out_dim, AllRows(out_dim));
    EXPECT_EQ(got, want) << GetDTypeTraits(static_cast<uint32_t>(type))->name;
  }
}

TEST(MatmulRefTest, DequantRowOfEveryTypeMatchesDequantizeRef) {
  const KernelTable ref = RefKernelTable();
  for (DType type : kWeightTypes) {
    const int cols = 512, rows = 3;
    const std::vector<uint8_t> w = testing::RandomWeights(type, rows, cols, 12);
    const std::vector<float> all = testing::DequantizeAll(type, w, rows, cols);
    const size_t row_bytes = RowBytes(*GetDTypeTraits(static_cast<uint32_t>(type)), cols);
    std::vector<float> row(cols);
    ASSERT_NE(ref.DequantRowFor(type), nullptr);
    ref.DequantRowFor(type)(w.data() + 2 * row_bytes, row.data(), cols);
    EXPECT_EQ(row, std::vector<float>(all.begin() + 2 * cols, all.end()));
  }
}

TEST(MatmulRefTest, HasNoKernelForATypeWithoutMatmul) {
  EXPECT_EQ(RefKernelTable().MatmulFor(static_cast<DType>(16)), nullptr);  // IQ2_XXS
  EXPECT_EQ(RefKernelTable().DequantRowFor(static_cast<DType>(16)), nullptr);
}

}  // namespace
}  // namespace smallmind::kernels
