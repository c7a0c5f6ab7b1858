// The AVX-512 softmax gives SoftmaxAvx2's bits: every row length from 1 to 80 (whole 16-wide
// groups, a lone 8-group, tails of every size) and a few long ones, rows whose exps underflow to
// zero, equal maxima, huge logits; several rows in one call. Runs where the CPU has AVX-512.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/avx512/kernels_avx512.h"
#include "kernels/dispatch.h"
#include "tests/kernels/random_weights.h"

namespace smallmind::kernels {
namespace {

using testing::RandomFloats;

class SoftmaxAvx512Test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CpuSupports(Isa::kAvx512)) GTEST_SKIP() << "this CPU has no AVX-512 (F/BW/DQ/VL/VNNI)";
  }
};

// Both kernels over a copy of x (rows of row_len); EXPECTs every bit equal.
void ExpectSameBits(const std::vector<float>& x, int row_len, int rows) {
  std::vector<float> want = x, got = x;
  avx2::SoftmaxAvx2(want.data(), row_len, RowRange{0, rows});
  avx512::SoftmaxAvx512(got.data(), row_len, RowRange{0, rows});
  for (size_t i = 0; i < x.size(); i++) {
    ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
        << "row_len " << row_len << " element " << i << ": " << got[i] << " vs " << want[i];
  }
}

TEST_F(SoftmaxAvx512Test, EveryLengthHasTheAvx2KernelsBits) {
  std::vector<int> lengths;
  for (int n = 1; n <= 80; n++) lengths.push_back(n);
  for (int n : {127, 128, 129, 513, 528, 2047}) lengths.push_back(n);
  for (int n : lengths) {
    // Scores as attention makes them (a few units apart), and spread wide enough that some exps
    // underflow to zero.
    ExpectSameBits(RandomFloats(3 * n, 100 + n, -4.0f, 4.0f), n, 3);
    ExpectSameBits(RandomFloats(2 * n, 200 + n, -60.0f, 60.0f), n, 2);
  }
}

TEST_F(SoftmaxAvx512Test, EdgeRowsHaveTheAvx2KernelsBits) {
  ExpectSameBits(std::vector<float>(37, 0.0f), 37, 1);                    // all equal
  ExpectSameBits({-1e30f, 3.0f, 1e30f, -5.0f, 1e30f, 2.0f, 0.5f}, 7, 1);  // huge, tied maxima
  ExpectSameBits({-0.0f, 0.0f, -0.0f, -3.0f, 0.0f, -0.0f, 1.0f, -1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
                  0.0f, 0.0f, 0.0f, -0.0f, 2.0f},
                 18, 1);
}

}  // namespace
}  // namespace smallmind::kernels
