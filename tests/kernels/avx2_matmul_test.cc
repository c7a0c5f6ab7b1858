// The AVX2 matmuls against their oracles: the float-activation ones bitwise against a scalar
// emulation of the order kernels_avx2.h states (and within a bound of the reference); the Q8 ones
// against the scalar Q8 reference and within the activation quantization error of the float
// reference; every op of both tables invariant to batch and row split. Random shapes with odd sizes
// and tails.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/dispatch.h"
#include "kernels/q8_act.h"
#include "kernels/ref/matmul_ref.h"
#include "kernels/ref/quantize_ref.h"
#include "tests/kernels/random_weights.h"

namespace smallmind::kernels {
namespace {

const char* Name(DType t) { return GetDTypeTraits(static_cast<uint32_t>(t))->name; }

// y[t, r] in the order kernels_avx2.h states, with scalar fmaf: chunks of 256, 8 lanes each.
std::vector<float> EmulateDeterministic(const std::vector<float>& w, const std::vector<float>& x,
                                        int n_tokens, int in_dim, int out_dim) {
  std::vector<float> y(static_cast<size_t>(n_tokens) * out_dim);
  for (int t = 0; t < n_tokens; t++) {
    for (int r = 0; r < out_dim; r++) {
      float total = 0.0f;
      for (int k0 = 0; k0 < in_dim; k0 += 256) {
        float lanes[8] = {};
        for (int k = k0; k < std::min(in_dim, k0 + 256); k++) {
          lanes[(k - k0) % 8] =
              std::fmaf(w[size_t(r) * in_dim + k], x[size_t(t) * in_dim + k], lanes[(k - k0) % 8]);
        }
        const float s = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
                        ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
        total = k0 == 0 ? s : total + s;
      }
      y[size_t(t) * out_dim + r] = total;
    }
  }
  return y;
}

class Avx2MatmulTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CpuSupports(Isa::kAvx2)) GTEST_SKIP() << "this CPU has no AVX2/FMA/F16C";
  }
};

// The float-activation kernels by weight type.
struct FloatKernel {
  DType type;
  MatmulFn fn;
};
constexpr FloatKernel kFloatKernels[] = {{DType::kF32, &avx2::MatmulF32Avx2},
                                         {DType::kF16, &avx2::MatmulF16Avx2},
                                         {DType::kBF16, &avx2::MatmulBf16Avx2}};

// y = x . w^T by `op` of `table` over `rows`, quantizing x and packing w first when op says so.
void RunOp(const KernelTable& table, const MatmulOp& op, const std::vector<uint8_t>& w,
           const float* x, float* y, int n_tokens, int in_dim, int out_dim, RowRange rows) {
  const std::vector<uint8_t> packed = testing::Pack(op, w, out_dim, in_dim);
  std::vector<uint8_t> xq;
  const void* input = x;
  if (op.input != MatmulInput::kF32) {
    std::vector<uint8_t> rows_q8(n_tokens * Q8ActRowBytes(in_dim));
    table.quantize_q8(x, rows_q8.data(), in_dim, AllRows(n_tokens));
    xq = testing::Q8InputFor(op, rows_q8.data(), n_tokens, in_dim);
    input = xq.data();
  }
  op.fn(packed.data(), input, y, n_tokens, in_dim, out_dim, rows);
}

TEST_F(Avx2MatmulTest, FloatMatmulsFollowTheirStatedOrderBitwiseOnRandomShapes) {
  std::mt19937 rng(7);
  for (const auto& [type, fn] : kFloatKernels) {
    const int block = GetDTypeTraits(static_cast<uint32_t>(type))->block_elems;
    for (int trial = 0; trial < 6; trial++) {
      // Float types get any width (tails of 1..7), block types 1..3 chunks plus partial ones.
      const int in_dim = block == 1
                             ? 1 + static_cast<int>(rng() % 700)
                             : block * (1 + static_cast<int>(rng() % (block == 32 ? 25 : 4)));
      const int out_dim = 1 + static_cast<int>(rng() % 37);
      const int n_tokens = 1 + static_cast<int>(rng() % 6);
      const std::vector<uint8_t> w = testing::RandomWeights(type, out_dim, in_dim, rng());
      const std::vector<float> wf = testing::DequantizeAll(type, w, out_dim, in_dim);
      const std::vector<float> x = testing::RandomFloats(size_t(n_tokens) * in_dim, rng());
      std::vector<float> got(size_t(n_tokens) * out_dim, NAN);
      fn(w.data(), x.data(), got.data(), n_tokens, in_dim, out_dim, AllRows(out_dim));
      EXPECT_EQ(got, EmulateDeterministic(wf, x, n_tokens, in_dim, out_dim))
          << Name(type) << " in " << in_dim << " out " << out_dim << " tokens " << n_tokens;
      std::vector<float> ref(got.size());
      MatmulF32Ref(wf.data(), x.data(), ref.data(), n_tokens, in_dim, out_dim, AllRows(out_dim));
      // Both sums are within n * 2^-24 * sum |w x| of the exact one (sequential summation bound).
      for (int t = 0; t < n_tokens; t++) {
        for (int r = 0; r < out_dim; r++) {
          double abs_terms = 0;
          for (int k = 0; k < in_dim; k++) {
            abs_terms += std::fabs(double{wf[size_t(r) * in_dim + k]} * x[size_t(t) * in_dim + k]);
          }
          const size_t i = size_t(t) * out_dim + r;
          EXPECT_NEAR(got[i], ref[i], 2 * in_dim * 0x1p-24 * abs_terms) << Name(type) << " " << i;
        }
      }
    }
  }
}

// What the deterministic path needs of every op (and the parallel path gets for free here): a
// token's row of y has the same bits alone or batched (any position, tiles of 4 tokens and the
// tail), under any row split.
TEST_F(Avx2MatmulTest, EveryMatmulRowIsTheSameWhateverTheBatchAndRowSplit) {
  for (ExecMode mode : {ExecMode::kDeterministic, ExecMode::kParallel}) {
    const KernelTable table = avx2::Avx2KernelTable(mode);
    const int in_dim = 768, out_dim = 45, n_tokens = 7;
    for (DType type : kWeightTypes) {
      const MatmulOp& op = *table.MatmulFor(type);
      const std::vector<uint8_t> w = testing::RandomWeights(type, out_dim, in_dim, 3);
      const std::vector<float> x = testing::RandomFloats(size_t(n_tokens) * in_dim, 4);
      std::vector<float> batched(size_t(n_tokens) * out_dim);
      for (int part = 0; part < 4; part++) {
        RunOp(table, op, w, x.data(), batched.data(), n_tokens, in_dim, out_dim,
              StaticRows(out_dim, 4, part));
      }
      for (int t = 0; t < n_tokens; t++) {
        std::vector<float> single(out_dim);
        RunOp(table, op, w, x.data() + size_t(t) * in_dim, single.data(), 1, in_dim, out_dim,
              AllRows(out_dim));
        for (int r = 0; r < out_dim; r++) {
          EXPECT_EQ(single[r], batched[size_t(t) * out_dim + r])
              << Name(type) << " t" << t << " r" << r;
        }
      }
    }
  }
}

TEST_F(Avx2MatmulTest, QuantizeQ8EqualsTheReferenceBitwise) {
  for (int in_dim : {32, 96, 2048}) {
    const int n = 5;
    std::vector<float> x = testing::RandomFloats(size_t(n) * in_dim, in_dim, -3.0f, 3.0f);
    for (int j = 0; j < 32; j++) x[j] = 0.0f;  // an all-zero block: scale 0
    x[40] = 1e-30f;                            // a block dominated by a tiny value
    for (bool q8_1 : {false, true}) {          // kQ8 (llama.cpp's q8_0) and kQ8_1 (its q8_1)
      std::vector<uint8_t> got(n * Q8ActRowBytes(in_dim)), want(got.size());
      (q8_1 ? avx2::QuantizeQ8_1Avx2 : avx2::QuantizeQ8Avx2)(x.data(), got.data(), in_dim,
                                                             AllRows(n));
      (q8_1 ? QuantizeQ8_1ActRef : QuantizeQ8ActRef)(x.data(), want.data(), in_dim, AllRows(n));
      for (int t = 0; t < n; t++) {  // compare the meaningful bytes of each row (not the padding)
        const size_t off = t * Q8ActRowBytes(in_dim), len = Q8ActRowDataBytes(in_dim);
        EXPECT_TRUE(std::equal(got.begin() + off, got.begin() + off + len, want.begin() + off))
            << "in_dim " << in_dim << " token " << t << (q8_1 ? " q8_1" : " q8_0");
      }
    }
  }
}

TEST_F(Avx2MatmulTest, Q8MatmulsMatchTheScalarQ8ReferenceAndTheFloatReference) {
  const KernelTable par = avx2::Avx2KernelTable(ExecMode::kParallel);
  const KernelTable det = avx2::Avx2KernelTable(ExecMode::kDeterministic);
  std::mt19937 rng(11);
  for (DType type : {DType::kQ8_0, DType::kQ4_0, DType::kQ5_0, DType::kIQ4_NL, DType::kMXFP4}) {
    ASSERT_EQ(par.MatmulFor(type)->input, MatmulInput::kQ8);
    // Both paths run this kernel (it is batch-invariant, see the test above).
    ASSERT_EQ(det.MatmulFor(type)->fn, par.MatmulFor(type)->fn);
    const MatmulFn q8_ref = type == DType::kQ8_0     ? &MatmulQ8_0Q8ActRef
                            : type == DType::kQ4_0   ? &MatmulQ4_0Q8ActRef
                            : type == DType::kQ5_0   ? &MatmulQ5_0Q8ActRef
                            : type == DType::kIQ4_NL ? &MatmulIQ4_NLQ8ActRef
                                                     : &MatmulMXFP4Q8ActRef;
    for (int trial = 0; trial < 8; trial++) {
      const int in_dim = 32 * (1 + static_cast<int>(rng() % 80));
      const int out_dim = 1 + static_cast<int>(rng() % 23);
      const int n_tokens = 1 + static_cast<int>(rng() % 10);
      const std::vector<uint8_t> w = testing::RandomWeights(type, out_dim, in_dim, rng());
      const std::vector<float> wf = testing::DequantizeAll(type, w, out_dim, in_dim);
      const std::vector<float> x = testing::RandomFloats(size_t(n_tokens) * in_dim, rng());
      std::vector<uint8_t> xq(n_tokens * Q8ActRowBytes(in_dim));
      par.quantize_q8(x.data(), xq.data(), in_dim, AllRows(n_tokens));
      const std::vector<uint8_t> packed = testing::Pack(*par.MatmulFor(type), w, out_dim, in_dim);
      std::vector<float> got(size_t(n_tokens) * out_dim), want(got.size()), exact(got.size());
      // Two row ranges that split a packed group of 8 rows.
      const int split = out_dim / 2;
      const std::vector<uint8_t> input =
          testing::Q8InputFor(*par.MatmulFor(type), xq.data(), n_tokens, in_dim);
      par.MatmulFor(type)->fn(packed.data(), input.data(), got.data(), n_tokens, in_dim, out_dim,
                              RowRange{0, split});
      par.MatmulFor(type)->fn(packed.data(), input.data(), got.data(), n_tokens, in_dim, out_dim,
                              RowRange{split, out_dim});
      q8_ref(w.data(), xq.data(), want.data(), n_tokens, in_dim, out_dim, AllRows(out_dim));
      MatmulF32Ref(wf.data(), x.data(), exact.data(), n_tokens, in_dim, out_dim, AllRows(out_dim));
      for (int t = 0; t < n_tokens; t++) {
        for (int r = 0; r < out_dim; r++) {
          // Float reordering only: relative to the sum of |terms|. Quantizing x moves each
          // element by at most half its block's step: sum over k of |w_k| * d_b / 2.
          double abs_terms = 0, quant_bound = 0;
          for (int k = 0; k < in_dim; k++) {
            const double wk = std::fabs(wf[size_t(r) * in_dim + k]);
            abs_terms += wk * std::fabs(x[size_t(t) * in_dim + k]);
            float amax = 0;
            for (int j = k / 32 * 32; j < k / 32 * 32 + 32; j++) {
              amax = std::max(amax, std::fabs(x[size_t(t) * in_dim + j]));
            }
            quant_bound += wk * amax / 127 / 2;
          }
          const size_t i = size_t(t) * out_dim + r;
          EXPECT_NEAR(got[i], want[i], 2e-6 * abs_terms + 1e-6)
              << Name(type) << " t" << t << " r" << r;
          EXPECT_NEAR(want[i], exact[i], 1.01 * quant_bound + 1e-5 * abs_terms)
              << Name(type) << " t" << t << " r" << r;
        }
      }
    }
  }
}

}  // namespace
}  // namespace smallmind::kernels
