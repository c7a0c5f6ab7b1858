#include "kernels/ref/matmul_ref.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace smallmind::kernels {
namespace {

std::vector<float> RandomVector(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

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

}  // namespace
}  // namespace smallmind::kernels
