// The low-bit types Q4_1, Q5_1, Q2_K and Q3_K: their block layouts read element by element as
// ggml lays them out, the quantizers' round trips, Q3_K's exact widening to Q6_K, the Q8-activation
// references against the float reference, and every x86 table's matmul bitwise equal to those
// references on random shapes, batches and row splits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/dispatch.h"
#include "kernels/low_bit_blocks.h"
#include "kernels/q8_act.h"
#include "kernels/ref/dequant_ref.h"
#include "kernels/ref/low_bit_ref.h"
#include "kernels/ref/matmul_ref.h"
#include "kernels/ref/quantize_ref.h"
#include "tests/kernels/random_weights.h"
#include "tests/kernels/vnni_emulated.h"

namespace smallmind::kernels {
namespace {

constexpr DType kLowBit[] = {DType::kQ4_1, DType::kQ5_1, DType::kQ2_K, DType::kQ3_K};

const char* Name(DType t) { return GetDTypeTraits(static_cast<uint32_t>(t))->name; }
int BlockElems(DType t) { return GetDTypeTraits(static_cast<uint32_t>(t))->block_elems; }

MatmulFn Q8Ref(DType t) {
  return t == DType::kQ4_1   ? &MatmulQ4_1Q8ActRef
         : t == DType::kQ5_1 ? &MatmulQ5_1Q8ActRef
         : t == DType::kQ2_K ? &MatmulQ2_KQ8ActRef
                             : &MatmulQ3_KQ8ActRef;
}

// The Q8 rows op reads, from the reference quantizers.
std::vector<uint8_t> Q8Rows(MatmulInput input, const std::vector<float>& x, int n, int in_dim) {
  std::vector<uint8_t> xq(n * Q8ActRowBytes(in_dim));
  const QuantizeQ8Fn fn = input == MatmulInput::kQ8_1 ? &QuantizeQ8_1ActRef : &QuantizeQ8KActRef;
  fn(x.data(), xq.data(), in_dim, AllRows(n));
  return xq;
}

TEST(LowBitTest, Q2_KReadsItsElementsAsGgmlLaysThemOut) {
  BlockQ2_K b = {};
  b.d = Fp32ToFp16(0.5f);
  b.dmin = Fp32ToFp16(0.25f);
  for (int s = 0; s < 16; s++) b.scales[s] = static_cast<uint8_t>((s % 15 + 1) | (s % 7) << 4);
  for (int i = 0; i < 64; i++) b.qs[i] = static_cast<uint8_t>(i * 37 + 11);
  float y[256];
  DequantizeQ2_KRef(&b, y, 256);
  // Element 128h + 32j + l: bits 2j of qs[32h + l]; sub-block e / 16.
  for (int e = 0; e < 256; e++) {
    const int h = e / 128, j = e % 128 / 32, l = e % 32;
    const int q = (b.qs[32 * h + l] >> (2 * j)) & 3;
    const int s = e / 16;
    const float want = 0.5f * static_cast<float>(b.scales[s] & 15) * static_cast<float>(q) -
                       0.25f * static_cast<float>(b.scales[s] >> 4);
    ASSERT_EQ(y[e], want) << "element " << e;
  }
}

TEST(LowBitTest, Q3_KReadsItsElementsAsGgmlLaysThemOut) {
  BlockQ3_K b = {};
  b.d = Fp32ToFp16(0.5f);
  for (int i = 0; i < 32; i++) b.hmask[i] = static_cast<uint8_t>(i * 53 + 7);
  for (int i = 0; i < 64; i++) b.qs[i] = static_cast<uint8_t>(i * 29 + 3);
  for (int i = 0; i < 12; i++) b.scales[i] = static_cast<uint8_t>(i * 71 + 5);
  // ggml's unpacking of the 12 scale bytes into 16 six-bit scales (kmask1 / kmask2).
  uint32_t aux[4];
  std::memcpy(aux, b.scales, 12);
  const uint32_t tmp = aux[2];
  aux[2] = ((aux[0] >> 4) & 0x0f0f0f0f) | (((tmp >> 4) & 0x03030303) << 4);
  aux[3] = ((aux[1] >> 4) & 0x0f0f0f0f) | (((tmp >> 6) & 0x03030303) << 4);
  aux[0] = (aux[0] & 0x0f0f0f0f) | (((tmp >> 0) & 0x03030303) << 4);
  aux[1] = (aux[1] & 0x0f0f0f0f) | (((tmp >> 2) & 0x03030303) << 4);
  int8_t scales[16];
  std::memcpy(scales, aux, 16);
  float y[256];
  DequantizeQ3_KRef(&b, y, 256);
  for (int e = 0; e < 256; e++) {
    const int h = e / 128, j = e % 128 / 32, l = e % 32;
    const int low = (b.qs[32 * h + l] >> (2 * j)) & 3;
    const int q = low - ((b.hmask[l] & (1 << (4 * h + j))) ? 0 : 4);
    const float dl = 0.5f * static_cast<float>(scales[e / 16] - 32);
    ASSERT_EQ(y[e], dl * static_cast<float>(q)) << "element " << e;
  }
}

TEST(LowBitTest, QuantizersRoundTripWithinTheirSteps) {
  const int n = 1024;
  const std::vector<float> x = testing::RandomFloats(n, 5, -2.0f, 2.0f);
  for (DType type : kLowBit) {
    std::vector<uint8_t> w = testing::RandomWeights(type, 1, n, 0);  // the right size
    switch (type) {
      case DType::kQ4_1:
        QuantizeQ4_1Ref(x.data(), reinterpret_cast<BlockQ4_1*>(w.data()), n);
        break;
      case DType::kQ5_1:
        QuantizeQ5_1Ref(x.data(), reinterpret_cast<BlockQ5_1*>(w.data()), n);
        break;
      case DType::kQ2_K:
        QuantizeQ2_KRef(x.data(), reinterpret_cast<BlockQ2_K*>(w.data()), n);
        break;
      default: QuantizeQ3_KRef(x.data(), reinterpret_cast<BlockQ3_K*>(w.data()), n); break;
    }
    const std::vector<float> back = testing::DequantizeAll(type, w, 1, n);
    double err = 0, energy = 0;
    for (int i = 0; i < n; i++) {
      err += (back[i] - x[i]) * (back[i] - x[i]);
      energy += x[i] * x[i];
    }
    // RMS error against the data's: 4-bit ~0.06, 5-bit ~0.03, 3-bit ~0.15, 2-bit ~0.3.
    const double bound = type == DType::kQ5_1   ? 0.04
                         : type == DType::kQ4_1 ? 0.08
                         : type == DType::kQ3_K ? 0.2
                                                : 0.4;
    EXPECT_LT(std::sqrt(err / energy), bound) << Name(type);
  }
  // Zeros stay zeros.
  const std::vector<float> zeros(256, 0.0f);
  for (DType type : kLowBit) {
    std::vector<uint8_t> w = testing::RandomWeights(type, 1, 256, 0);
    if (type == DType::kQ2_K)
      QuantizeQ2_KRef(zeros.data(), reinterpret_cast<BlockQ2_K*>(w.data()), 256);
    if (type == DType::kQ3_K)
      QuantizeQ3_KRef(zeros.data(), reinterpret_cast<BlockQ3_K*>(w.data()), 256);
    if (type == DType::kQ4_1)
      QuantizeQ4_1Ref(zeros.data(), reinterpret_cast<BlockQ4_1*>(w.data()), 256);
    if (type == DType::kQ5_1)
      QuantizeQ5_1Ref(zeros.data(), reinterpret_cast<BlockQ5_1*>(w.data()), 256);
    for (float v : testing::DequantizeAll(type, w, 1, 256)) ASSERT_EQ(v, 0.0f) << Name(type);
  }
}

TEST(LowBitTest, Q3_KWidensToTheQ6_KOfTheSameValues) {
  const std::vector<uint8_t> w = testing::RandomWeights(DType::kQ3_K, 4, 512, 9);
  const auto* blocks = reinterpret_cast<const BlockQ3_K*>(w.data());
  for (int b = 0; b < 8; b++) {
    const BlockQ6_K wide = WidenQ3_KToQ6_K(blocks[b]);
    float want[256], got[256];
    DequantizeQ3_KRef(blocks + b, want, 256);
    DequantizeQ6_KRef(&wide, got, 256);
    for (int e = 0; e < 256; e++) ASSERT_EQ(got[e], want[e]) << "block " << b << " element " << e;
  }
}

TEST(LowBitTest, Q8ReferencesTrackTheFloatReference) {
  std::mt19937 rng(17);
  for (DType type : kLowBit) {
    const MatmulInput input =
        type == DType::kQ4_1 || type == DType::kQ5_1 ? MatmulInput::kQ8_1 : MatmulInput::kQ8K;
    const int in_dim = 256 * (1 + static_cast<int>(rng() % 4)), out_dim = 13, n_tokens = 3;
    const std::vector<uint8_t> w = testing::RandomWeights(type, out_dim, in_dim, rng());
    const std::vector<float> wf = testing::DequantizeAll(type, w, out_dim, in_dim);
    const std::vector<float> x = testing::RandomFloats(size_t(n_tokens) * in_dim, rng());
    const std::vector<uint8_t> xq = Q8Rows(input, x, n_tokens, in_dim);
    std::vector<float> got(size_t(n_tokens) * out_dim), exact(got.size());
    Q8Ref(type)(w.data(), xq.data(), got.data(), n_tokens, in_dim, out_dim, AllRows(out_dim));
    MatmulF32Ref(wf.data(), x.data(), exact.data(), n_tokens, in_dim, out_dim, AllRows(out_dim));
    for (size_t i = 0; i < got.size(); i++) {
      double abs_terms = 0;
      const size_t t = i / out_dim, r = i % out_dim;
      for (int k = 0; k < in_dim; k++) {
        abs_terms += std::fabs(double{wf[r * in_dim + k]} * x[t * in_dim + k]);
      }
      // 8-bit activations: each term moves by at most ~1/127 of the block's largest.
      EXPECT_NEAR(got[i], exact[i], abs_terms / 100 + 1e-5) << Name(type) << " " << i;
    }
  }
}

// Every table that runs on this CPU (and the VNNI cores on a scalar stand-in) against the
// references, bitwise: random shapes, batch sizes 1-11 and two row ranges splitting a group.
TEST(LowBitTest, EveryX86MatmulEqualsItsQ8ReferenceBitwise) {
  if (!CpuSupports(Isa::kAvx2)) GTEST_SKIP() << "this CPU has no AVX2/FMA/F16C";
  std::vector<std::pair<std::string, KernelTable>> tables = {
      {"avx2", SelectKernels(Isa::kAvx2, ExecMode::kDeterministic)},
      {"vnni-emulated", testing::EmulatedVnniKernelTable(ExecMode::kDeterministic)}};
  for (Isa isa : {Isa::kAvxVnni, Isa::kAvx512}) {
    if (CpuSupports(isa))
      tables.emplace_back(IsaName(isa), SelectKernels(isa, ExecMode::kParallel));
  }
  std::mt19937 rng(29);
  for (const auto& [table_name, table] : tables) {
    for (DType type : kLowBit) {
      const MatmulOp& op = *table.MatmulFor(type);
      ASSERT_NE(op.pack, nullptr) << table_name << " " << Name(type);
      for (int trial = 0; trial < 6; trial++) {
        const int blocks = 1 + static_cast<int>(rng() % (BlockElems(type) == 32 ? 40 : 5));
        const int in_dim = blocks * BlockElems(type);
        const int out_dim = 1 + static_cast<int>(rng() % 30);
        const int n_tokens = 1 + static_cast<int>(rng() % 11);
        const std::vector<uint8_t> w = testing::RandomWeights(type, out_dim, in_dim, rng());
        const std::vector<float> x = testing::RandomFloats(size_t(n_tokens) * in_dim, rng());
        const std::vector<uint8_t> xq = Q8Rows(op.input, x, n_tokens, in_dim);
        const std::vector<uint8_t> packed = testing::Pack(op, w, out_dim, in_dim);
        std::vector<float> got(size_t(n_tokens) * out_dim, NAN), want(got.size());
        const int split = out_dim / 2;
        op.fn(packed.data(), xq.data(), got.data(), n_tokens, in_dim, out_dim, {0, split});
        op.fn(packed.data(), xq.data(), got.data(), n_tokens, in_dim, out_dim, {split, out_dim});
        Q8Ref(type)(w.data(), xq.data(), want.data(), n_tokens, in_dim, out_dim, AllRows(out_dim));
        for (size_t i = 0; i < got.size(); i++) {
          uint32_t g, e;
          std::memcpy(&g, &got[i], 4);
          std::memcpy(&e, &want[i], 4);
          ASSERT_EQ(g, e) << table_name << " " << Name(type) << " in " << in_dim << " out "
                          << out_dim << " n " << n_tokens << " at " << i << ": " << got[i] << " vs "
                          << want[i];
        }
      }
    }
  }
}

// Q2_K's int16 partial sums at their extremes: quants 3 against activation quants of +-127.
TEST(LowBitTest, Q2_KExtremeQuantsStayExact) {
  if (!CpuSupports(Isa::kAvx2)) GTEST_SKIP() << "this CPU has no AVX2/FMA/F16C";
  const KernelTable table = SelectKernels(Isa::kAvx2, ExecMode::kParallel);
  const int in_dim = 512, out_dim = 9, n_tokens = 5;
  std::vector<uint8_t> w = testing::RandomWeights(DType::kQ2_K, out_dim, in_dim, 3);
  auto* blocks = reinterpret_cast<BlockQ2_K*>(w.data());
  for (int b = 0; b < out_dim * in_dim / 256; b++) {
    std::memset(blocks[b].qs, 0xff, sizeof(blocks[b].qs));
    std::memset(blocks[b].scales, 0xff, sizeof(blocks[b].scales));
  }
  std::vector<float> x(size_t(n_tokens) * in_dim);
  for (size_t i = 0; i < x.size(); i++) x[i] = (i / 7) % 2 ? 1.0f : -1.0f;
  const MatmulOp& op = *table.MatmulFor(DType::kQ2_K);
  const std::vector<uint8_t> xq = Q8Rows(op.input, x, n_tokens, in_dim);
  const std::vector<uint8_t> packed = testing::Pack(op, w, out_dim, in_dim);
  std::vector<float> got(size_t(n_tokens) * out_dim), want(got.size());
  op.fn(packed.data(), xq.data(), got.data(), n_tokens, in_dim, out_dim, AllRows(out_dim));
  MatmulQ2_KQ8ActRef(w.data(), xq.data(), want.data(), n_tokens, in_dim, out_dim, AllRows(out_dim));
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace smallmind::kernels
