// kernels/vector_math: every ISA's table against the scalar reference, including -inf, NaN, large
// negative inputs, exact 0 and tails (lengths that are not multiples of 8).
#include "kernels/vector_math.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace smallmind::kernels {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kFltMin = std::numeric_limits<float>::min();
const int kLengths[] = {0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 100, 1001};

std::vector<Isa> SimdIsas() {
  std::vector<Isa> isas;
  if (CpuSupports(Isa::kAvx2)) isas.push_back(Isa::kAvx2);
  if (CpuSupports(Isa::kAvxVnni)) isas.push_back(Isa::kAvxVnni);
  if (CpuSupports(Isa::kAvx512)) isas.push_back(Isa::kAvx512);
  if (CpuSupports(Isa::kAmx)) isas.push_back(Isa::kAmx);
  return isas;
}

// Logit-like values with the awkward ones sprinkled in: -inf, NaN, ties, large negatives.
std::vector<float> AwkwardValues(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 8.0f);
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) {
    switch (rng() % 10) {
      case 0: x[i] = -kInf; break;
      case 1: x[i] = kNaN; break;
      case 2: x[i] = -200.0f - static_cast<float>(rng() % 1000); break;
      case 3:
        x[i] = 3.0f;  // ties
        break;
      default: x[i] = normal(rng);
    }
  }
  return x;
}

int64_t UlpDistance(float a, float b) {
  auto key = [](float v) {
    const int32_t bits = std::bit_cast<int32_t>(v);
    return bits < 0 ? int64_t{INT32_MIN} - bits : int64_t{bits};
  };
  return std::llabs(key(a) - key(b));
}

TEST(VectorMathTest, ReductionsAndSearchesMatchTheReferenceExactly) {
  const VectorMathOps& ref = VectorMathFor(Isa::kRef);
  for (Isa isa : SimdIsas()) {
    const VectorMathOps& simd = VectorMathFor(isa);
    for (int n : kLengths) {
      const std::vector<float> x = AwkwardValues(n, 100 + n);
      SCOPED_TRACE(testing::Message() << IsaName(isa) << " n=" << n);
      const float m = ref.max_value(x.data(), n);
      EXPECT_EQ(std::bit_cast<uint32_t>(simd.max_value(x.data(), n)), std::bit_cast<uint32_t>(m));
      EXPECT_EQ(simd.arg_max(x.data(), n), ref.arg_max(x.data(), n));
      for (float t : {-kInf, -1.0f, 3.0f, m, kInf}) {
        EXPECT_EQ(simd.find_first_greater(x.data(), n, t), ref.find_first_greater(x.data(), n, t));
      }
      std::vector<float> w(n);
      ref.exp_of_scaled(x.data(), w.data(), n, m, 0.7f);
      EXPECT_EQ(std::bit_cast<uint64_t>(simd.sum_to_double(w.data(), n)),
                std::bit_cast<uint64_t>(ref.sum_to_double(w.data(), n)));
    }
  }
}

TEST(VectorMathTest, ArgMaxIgnoresNaNAndGivesTheLowestIndexOfATie) {
  for (Isa isa : {Isa::kRef, Isa::kBest}) {
    const VectorMathOps& ops = VectorMathFor(isa);
    const std::vector<float> x = {kNaN, 1.0f, 5.0f, kNaN, 5.0f, -kInf, 2.0f, 5.0f, 0.0f, 5.0f};
    EXPECT_EQ(ops.arg_max(x.data(), 10), 2);
    EXPECT_EQ(ops.max_value(x.data(), 10), 5.0f);
    const std::vector<float> none(11, -kInf);
    EXPECT_EQ(ops.arg_max(none.data(), 11), 0);
    EXPECT_EQ(ops.max_value(none.data(), 11), -kInf);
  }
}

TEST(VectorMathTest, ExpOfScaledIsWithinTwoUlpOfTheReferenceAndZeroForInfAndNaN) {
  const VectorMathOps& ref = VectorMathFor(Isa::kRef);
  for (Isa isa : SimdIsas()) {
    const VectorMathOps& simd = VectorMathFor(isa);
    for (int n : kLengths) {
      const std::vector<float> x = AwkwardValues(n, 200 + n);
      for (float t : {0.8f, 1.0f, 0.05f, 2.5f}) {
        SCOPED_TRACE(testing::Message() << IsaName(isa) << " n=" << n << " t=" << t);
        const float shift = ref.max_value(x.data(), n);
        std::vector<float> want(n), got(n + 1, -1.0f);  // got[n]: must stay untouched
        ref.exp_of_scaled(x.data(), want.data(), n, shift, t);
        simd.exp_of_scaled(x.data(), got.data(), n, shift, t);
        EXPECT_EQ(got[n], -1.0f) << "wrote past n";
        for (int i = 0; i < n; ++i) {
          if (std::isnan(x[i]) || x[i] == -kInf) {
            EXPECT_EQ(got[i], 0.0f) << "x=" << x[i];
          } else if (want[i] < kFltMin) {  // flushing denormals is allowed
            EXPECT_LE(got[i], kFltMin) << "x=" << x[i];
          } else {
            EXPECT_LE(UlpDistance(got[i], want[i]), 2)
                << "x=" << x[i] << " " << got[i] << " vs " << want[i];
          }
          if (x[i] == shift) {
            EXPECT_EQ(got[i], 1.0f);
          }
        }
      }
    }
  }
}

TEST(VectorMathTest, ExpOfScaledSweepStaysWithinTwoUlp) {
  const VectorMathOps& ref = VectorMathFor(Isa::kRef);
  for (Isa isa : SimdIsas()) {
    const VectorMathOps& simd = VectorMathFor(isa);
    constexpr int kN = 20001;  // (x - 0) / 1 over [-100, 0] in even steps, 0 included
    std::vector<float> x(kN), want(kN), got(kN);
    for (int i = 0; i < kN; ++i) x[i] = -100.0f + 100.0f * static_cast<float>(i) / (kN - 1);
    ref.exp_of_scaled(x.data(), want.data(), kN, 0.0f, 1.0f);
    simd.exp_of_scaled(x.data(), got.data(), kN, 0.0f, 1.0f);
    for (int i = 0; i < kN; ++i) {
      if (want[i] < kFltMin) {
        EXPECT_LE(got[i], kFltMin) << "x=" << x[i];
      } else {
        EXPECT_LE(UlpDistance(got[i], want[i]), 2) << "x=" << x[i];
      }
    }
    EXPECT_EQ(got[kN - 1], 1.0f);
  }
}

TEST(VectorMathTest, DenormalTemperatureGivesOneForTheMaxAndZeroElsewhere) {
  for (Isa isa : {Isa::kRef, Isa::kBest}) {
    const std::vector<float> x = {2.0f, 2.0f - 1e-6f, -kInf, 1.0f};
    std::vector<float> out(4);
    VectorMathFor(isa).exp_of_scaled(x.data(), out.data(), 4, 2.0f, 1e-40f);
    EXPECT_EQ(out, (std::vector<float>{1.0f, 0.0f, 0.0f, 0.0f})) << IsaName(isa);
  }
}

TEST(VectorMathTest, SumToDoubleAddsLanesInTheStatedOrder) {
  // 1e16 in lane 0 swallows the 1.0s added to it one by one, not those in other lanes.
  std::vector<float> x(17, 1.0f);
  x[0] = 1e16f;
  double lane[8] = {};
  for (int i = 0; i < 17; ++i) lane[i % 8] += x[i];
  const double want =
      ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
  for (Isa isa : {Isa::kRef, Isa::kBest}) {
    EXPECT_EQ(VectorMathFor(isa).sum_to_double(x.data(), 17), want) << IsaName(isa);
  }
}

}  // namespace
}  // namespace smallmind::kernels
