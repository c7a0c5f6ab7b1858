// The VNNI Q8_0 / Q4_0 / Q4_K / Q5_K / Q6_K matmuls of both flavours (avx512: AVX-512 VNNI, its
// Q8_0 and Q4_0 on 512-bit registers; avxvnni: AVX-VNNI), and the amx table (its AMX Q8_0 matmul,
// the avx512 ones beside it), against the AVX2 ones they replace: the same packed weights and Q8
// activations give the same bits for every batch size, place in the batch, row range and shape (odd
// block counts, out_dim ending groups and chunks early), and at the extremes of the quants (w =
// -128 and 127 against x = +-127, where the AVX2 core's int16 steps come closest to saturating; the
// K-quants' random quant bytes and scales cover their ranges). The AVX2 ones are checked against
// the scalar reference elsewhere (avx2_matmul_test.cc, avx2_q8_tiling_test.cc), so this makes the
// VNNI and AMX ones as good. Dispatch: the best set is avx512 where the CPU has it, else avxvnni
// (amx only by name), and each table holds its kernels. Each flavour is skipped on a CPU without
// it. Three more, "emulated", "amx_emulated" and "zmm_emulated", run the same integer cores on a
// scalar vpdpbusd (vnni_emulated.h), the AMX kernel on scalar tiles (amx_emulated.h) and the avx512
// table's 512-bit Q8_0 and Q4_0 kernels on 256-bit halves (zmm_emulated.h) wherever AVX2 runs, so
// their logic is checked on every machine.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/amx/kernels_amx.h"
#include "kernels/avx2/kernels_avx2.h"
#include "kernels/avx512/kernels_avx512.h"
#include "kernels/avx_vnni/kernels_avx_vnni.h"
#include "kernels/dispatch.h"
#include "kernels/q8_act.h"
#include "kernels/quant_blocks.h"
#include "tests/kernels/amx_emulated.h"
#include "tests/kernels/random_weights.h"
#include "tests/kernels/vnni_emulated.h"
#include "tests/kernels/zmm_emulated.h"

namespace smallmind::kernels {
namespace {

// A flavour of the VNNI cores or the AMX kernel: a real instruction set, or a scalar stand-in.
struct Flavour {
  Isa isa;  // the set whose table is tested (kAvx2 for the emulated ones: what they need)
  KernelTable (*emulated)(ExecMode) = nullptr;  // the stand-in's table
  const char* emulated_name = "";
  std::string Name() const { return emulated ? emulated_name : IsaName(isa); }
  KernelTable Table(ExecMode mode) const {
    return emulated ? emulated(mode) : SelectKernels(isa, mode);
  }
  friend void PrintTo(const Flavour& f, std::ostream* os) { *os << f.Name(); }
};

// The flavour under test (GetParam()).
class VnniMatmulTest : public ::testing::TestWithParam<Flavour> {
 protected:
  void SetUp() override {
    if (!CpuSupports(GetParam().isa)) {
      GTEST_SKIP() << "this CPU does not run " << IsaName(GetParam().isa);
    }
  }
};

const char* Name(DType t) { return GetDTypeTraits(static_cast<uint32_t>(t))->name; }

// y = x . w^T for tokens [t0, t0 + n) over `rows` by `table`'s op for `type` (the rest NaN).
std::vector<float> Matmul(const KernelTable& table, DType type, const std::vector<uint8_t>& w,
                          const std::vector<uint8_t>& xq, int t0, int n, int in_dim, int out_dim,
                          RowRange rows) {
  const MatmulOp& op = *table.MatmulFor(type);
  const std::vector<uint8_t> packed = testing::Pack(op, w, out_dim, in_dim);
  std::vector<float> y(static_cast<size_t>(n) * out_dim, NAN);
  const std::vector<uint8_t> x =
      testing::Q8InputFor(op, xq.data() + t0 * Q8ActRowBytes(in_dim), n, in_dim);
  op.fn(packed.data(), x.data(), y.data(), n, in_dim, out_dim, rows);
  return y;
}

// The rows `type`'s matmul reads (kQ8K for the K-quants, whose VNNI decode reads its sums per 16).
std::vector<uint8_t> Quantize(const KernelTable& table, DType type, const std::vector<float>& x,
                              int n, int in_dim) {
  const MatmulInput input = table.MatmulFor(type)->input;
  const QuantizeQ8Fn quantize = input == MatmulInput::kQ8K    ? table.quantize_q8_k
                                : input == MatmulInput::kQ8_1 ? table.quantize_q8_1
                                                              : table.quantize_q8;
  std::vector<uint8_t> xq(n * Q8ActRowBytes(in_dim));
  quantize(x.data(), xq.data(), in_dim, AllRows(n));
  return xq;
}

// Bitwise equal, NaN (unwritten) in the same places.
void ExpectSameBits(const std::vector<float>& a, const std::vector<float>& b,
                    const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); i++) {
    uint32_t ua, ub;
    std::memcpy(&ua, &a[i], 4);
    std::memcpy(&ub, &b[i], 4);
    ASSERT_EQ(ua, ub) << what << " at " << i << ": " << a[i] << " vs " << b[i];
  }
}

TEST_P(VnniMatmulTest, BestIsaPrefersAvx512ThenAvxVnniAndEachTableHasItsMatmuls) {
  if (GetParam().emulated) GTEST_SKIP() << "no instruction set to dispatch to";
  // amx only by name (dispatch.cc says why).
  EXPECT_EQ(BestIsa(), CpuSupports(Isa::kAvx512) ? Isa::kAvx512 : Isa::kAvxVnni);
  const bool avx512 = GetParam().isa == Isa::kAvx512 || GetParam().isa == Isa::kAmx;
  const MatmulFn want[] = {
      GetParam().isa == Isa::kAmx ? &amx::MatmulQ8_0x16Q8Amx
      : avx512                    ? &avx512::MatmulQ8_0x16Q8Avx512
                                  : &avx_vnni::MatmulQ8_0x8Q8AvxVnni,
      avx512 ? &avx512::MatmulQ4_0x16Q8Avx512 : &avx_vnni::MatmulQ4_0x8Q8AvxVnni,
      avx512 ? &avx512::MatmulQ4_Kx8Q8Vnni : &avx_vnni::MatmulQ4_Kx8Q8AvxVnni,
      avx512 ? &avx512::MatmulQ5_Kx8Q8Vnni : &avx_vnni::MatmulQ5_Kx8Q8AvxVnni,
      avx512 ? &avx512::MatmulQ6_Kx8Q8Vnni : &avx_vnni::MatmulQ6_Kx8Q8AvxVnni,
      avx512 ? &avx512::MatmulIQ4_XSx8Q8Vnni : &avx_vnni::MatmulIQ4_XSx8Q8AvxVnni,
      avx512 ? &avx512::MatmulQ2_Kx8Q8Vnni : &avx_vnni::MatmulQ2_Kx8Q8AvxVnni};
  for (ExecMode mode : {ExecMode::kDeterministic, ExecMode::kParallel}) {
    const KernelTable t = SelectKernels(GetParam().isa, mode);
    const KernelTable base = SelectKernels(Isa::kAvx2, mode);
    int i = 0;
    for (DType type : {DType::kQ8_0, DType::kQ4_0, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K,
                       DType::kIQ4_XS, DType::kQ2_K}) {
      EXPECT_EQ(t.MatmulFor(type)->fn, want[i++]) << Name(type);
      // Q8_0 offset to unsigned quants for vpdpbusd; Q8_0 (also for TDPBSUD) and Q4_0 16 rows a
      // group for the 512-bit vpdpbusd; the rest as the AVX2 kernels pack them.
      const PackFn pack = type == DType::kQ8_0 ? (avx512 ? &avx2::PackQ8_0x16u : &avx2::PackQ8_0x8u)
                          : type == DType::kQ4_0 && avx512 ? &avx2::PackQ4_0x16
                                                           : base.MatmulFor(type)->pack;
      EXPECT_EQ(t.MatmulFor(type)->pack, pack) << Name(type);
    }
    // IQ4_NL and MXFP4 on the AVX-512 table: its 16-row kernels on the codes.
    if (GetParam().isa == Isa::kAvx512) {
      EXPECT_EQ(t.MatmulFor(DType::kIQ4_NL)->fn, &avx512::MatmulIQ4_NLx16Q8Avx512);
      EXPECT_EQ(t.MatmulFor(DType::kIQ4_NL)->pack, &avx2::PackIQ4_NLx16);
      EXPECT_EQ(t.MatmulFor(DType::kMXFP4)->fn, &avx512::MatmulMXFP4x16Q8Avx512);
      EXPECT_EQ(t.MatmulFor(DType::kMXFP4)->pack, &avx2::PackMXFP4x16);
    }
    // Q5_0 (and IQ4_NL and MXFP4 on the AVX-VNNI and AMX tables): the table's Q8_0 op on weights
    // widened into its packed layout.
    for (DType type : {DType::kQ5_0, DType::kIQ4_NL, DType::kMXFP4}) {
      if (type != DType::kQ5_0 && GetParam().isa == Isa::kAvx512) continue;
      const MatmulOp& q8_0 = *t.MatmulFor(DType::kQ8_0);
      EXPECT_EQ(t.MatmulFor(type)->fn, q8_0.fn) << Name(type);
      EXPECT_EQ(t.MatmulFor(type)->input, q8_0.input) << Name(type);
      EXPECT_EQ(t.MatmulFor(type)->pack, avx2::WidenedQ8_0Pack(q8_0.pack, type)) << Name(type);
      EXPECT_NE(t.MatmulFor(type)->pack, nullptr) << Name(type);
    }
  }
}

// Every batch size 1-20 at both ends of a 20-token batch, for each shape of `type`.
void ExpectEveryBatchSizeGivesTheAvx2Bits(const Flavour& flavour, DType type,
                                          std::initializer_list<std::pair<int, int>> shapes) {
  const KernelTable avx2 = SelectKernels(Isa::kAvx2, ExecMode::kParallel);
  const KernelTable vnni = flavour.Table(ExecMode::kParallel);
  for (const auto& [in_dim, out_dim] : shapes) {
    const int max_tokens = 20;
    const std::vector<uint8_t> w = testing::RandomWeights(type, out_dim, in_dim, 11);
    const std::vector<float> x = testing::RandomFloats(size_t(max_tokens) * in_dim, 12);
    const std::vector<uint8_t> xq = Quantize(avx2, type, x, max_tokens, in_dim);
    ASSERT_EQ(xq, Quantize(vnni, type, x, max_tokens, in_dim));
    for (int n = 1; n <= max_tokens; n++) {
      for (int t0 : {0, max_tokens - n}) {
        const std::string what = std::string(Name(type)) + " in " + std::to_string(in_dim) +
                                 " out " + std::to_string(out_dim) + " n " + std::to_string(n) +
                                 " t0 " + std::to_string(t0);
        ExpectSameBits(Matmul(vnni, type, w, xq, t0, n, in_dim, out_dim, AllRows(out_dim)),
                       Matmul(avx2, type, w, xq, t0, n, in_dim, out_dim, AllRows(out_dim)), what);
      }
    }
  }
}

TEST_P(VnniMatmulTest, EveryBatchSizeAndShapeGivesTheAvx2Bits) {
  for (DType type : {DType::kQ8_0, DType::kQ4_0, DType::kQ5_0, DType::kIQ4_NL, DType::kMXFP4}) {
    ExpectEveryBatchSizeGivesTheAvx2Bits(
        GetParam(), type, {{32, 40}, {96, 33}, {768, 56}, {2048, 24}, {64, 100}, {32 * 187, 72}});
  }
  // rows of whole 256-element super-blocks
  for (DType type :
       {DType::kQ4_K, DType::kQ5_K, DType::kQ6_K, DType::kIQ4_XS, DType::kQ2_K, DType::kQ3_K}) {
    ExpectEveryBatchSizeGivesTheAvx2Bits(GetParam(), type,
                                         {{256, 40}, {768, 33}, {2048, 24}, {256 * 7, 100}});
  }
}

TEST_P(VnniMatmulTest, RowRangesGiveTheAvx2Bits) {
  const KernelTable avx2 = SelectKernels(Isa::kAvx2, ExecMode::kDeterministic);
  const KernelTable vnni = GetParam().Table(ExecMode::kDeterministic);
  std::mt19937 rng(23);
  for (DType type :
       {DType::kQ8_0, DType::kQ4_0, DType::kQ5_0, DType::kIQ4_NL, DType::kMXFP4, DType::kQ4_K,
        DType::kQ5_K, DType::kQ6_K, DType::kIQ4_XS, DType::kQ2_K, DType::kQ3_K}) {
    const bool k_quant = GetDTypeTraits(static_cast<uint32_t>(type))->block_elems == kQkK;
    const int in_dim = k_quant ? 512 : 160, out_dim = 120, n_tokens = 9;
    const std::vector<uint8_t> w = testing::RandomWeights(type, out_dim, in_dim, rng());
    const std::vector<uint8_t> xq = Quantize(
        avx2, type, testing::RandomFloats(size_t(n_tokens) * in_dim, rng()), n_tokens, in_dim);
    for (int trial = 0; trial < 12; trial++) {
      const int size = trial < 6 ? 16 : 1 + static_cast<int>(rng() % 40);
      const int begin = static_cast<int>(rng() % (out_dim - size + 1));
      const RowRange rows{begin, begin + size};
      for (int n : {1, 3, 4, 5, n_tokens}) {
        ExpectSameBits(Matmul(vnni, type, w, xq, 0, n, in_dim, out_dim, rows),
                       Matmul(avx2, type, w, xq, 0, n, in_dim, out_dim, rows),
                       std::string(Name(type)) + " rows " + std::to_string(begin) + "+" +
                           std::to_string(size) + " n " + std::to_string(n));
      }
    }
  }
}

TEST_P(VnniMatmulTest, ExtremeQuantsGiveTheAvx2Bits) {
  const KernelTable avx2 = SelectKernels(Isa::kAvx2, ExecMode::kParallel);
  const KernelTable vnni = GetParam().Table(ExecMode::kParallel);
  const int in_dim = 256, out_dim = 24, n_tokens = 9;
  // Q8_0 rows of -128 and 127 quants (a file may hold -128; the reference quantizer never writes
  // it), alternating by row, element or block; Q4_0 rows of nibbles 0 and 15.
  std::vector<uint8_t> q8(out_dim * (in_dim / 32) * sizeof(BlockQ8_0));
  std::vector<uint8_t> q4(out_dim * (in_dim / 32) * sizeof(BlockQ4_0));
  auto* b8 = reinterpret_cast<BlockQ8_0*>(q8.data());
  auto* b4 = reinterpret_cast<BlockQ4_0*>(q4.data());
  for (int r = 0; r < out_dim; r++) {
    for (int b = 0; b < in_dim / 32; b++) {
      BlockQ8_0& blk8 = b8[r * (in_dim / 32) + b];
      BlockQ4_0& blk4 = b4[r * (in_dim / 32) + b];
      blk8.d = blk4.d = 0x3c00;  // 1.0
      for (int i = 0; i < 32; i++) {
        const bool low = r % 3 == 0 || (r % 3 == 1 && i % 2 == 0) || (r % 3 == 2 && b % 2 == 0);
        blk8.qs[i] = low ? int8_t{-128} : int8_t{127};
      }
      for (int i = 0; i < 16; i++) blk4.qs[i] = r % 2 == 0 ? 0xff : (i % 2 == 0 ? 0xf0 : 0x0f);
    }
  }
  // Q5_0 rows of quants 0 and 31 (-16 and 15 after the offset) and IQ4_NL rows of indices 0 and 15
  // (levels -127 and 113): Q4_0's nibble patterns, Q5_0 with every fifth bit set or none.
  std::vector<uint8_t> q5(out_dim * (in_dim / 32) * sizeof(BlockQ5_0));
  std::vector<uint8_t> nl(out_dim * (in_dim / 32) * sizeof(BlockIQ4_NL));
  auto* b5 = reinterpret_cast<BlockQ5_0*>(q5.data());
  auto* bn = reinterpret_cast<BlockIQ4_NL*>(nl.data());
  for (int i = 0; i < out_dim * (in_dim / 32); i++) {
    b5[i].d = bn[i].d = 0x3c00;
    std::memcpy(b5[i].qs, b4[i].qs, 16);
    std::memcpy(bn[i].qs, b4[i].qs, 16);
    std::memset(b5[i].qh, (i / (in_dim / 32)) % 4 < 2 ? 0xff : 0x00, 4);
  }
  // Activations at +-1 (quants +-127) in the same patterns, and one row of random values.
  std::vector<float> x(size_t(n_tokens) * in_dim);
  for (int t = 0; t < n_tokens; t++) {
    for (int k = 0; k < in_dim; k++) {
      const float v = t % 3 == 0 ? -1.0f : (t % 3 == 1 ? (k % 2 == 0 ? 1.0f : -1.0f) : 1.0f);
      x[size_t(t) * in_dim + k] = t == n_tokens - 1 ? std::sin(0.37f * k) : v;
    }
  }
  const std::vector<uint8_t> xq = Quantize(avx2, DType::kQ8_0, x, n_tokens, in_dim);
  for (const auto& [type, w] : {std::pair{DType::kQ8_0, &q8},
                                {DType::kQ4_0, &q4},
                                {DType::kQ5_0, &q5},
                                {DType::kIQ4_NL, &nl}}) {
    for (int n : {1, 2, 3, 8, n_tokens}) {
      ExpectSameBits(Matmul(vnni, type, *w, xq, 0, n, in_dim, out_dim, AllRows(out_dim)),
                     Matmul(avx2, type, *w, xq, 0, n, in_dim, out_dim, AllRows(out_dim)),
                     std::string(Name(type)) + " n " + std::to_string(n));
    }
  }
}

// Q8_0 batches past one AMX tile of 16 tokens (prefill chunks, 16+ streams): whole tiles and a
// ragged last one, every row range start in a chunk of groups.
TEST_P(VnniMatmulTest, LongQ8_0BatchesGiveTheAvx2Bits) {
  const KernelTable avx2 = SelectKernels(Isa::kAvx2, ExecMode::kParallel);
  const KernelTable vnni = GetParam().Table(ExecMode::kParallel);
  const int max_tokens = 130;
  for (const auto& [in_dim, out_dim] : {std::pair{768, 72}, {96, 40}}) {
    const std::vector<uint8_t> w = testing::RandomWeights(DType::kQ8_0, out_dim, in_dim, 31);
    const std::vector<uint8_t> xq =
        Quantize(avx2, DType::kQ8_0, testing::RandomFloats(size_t(max_tokens) * in_dim, 32),
                 max_tokens, in_dim);
    for (int n : {17, 31, 32, 33, 64, 128, 130}) {
      for (RowRange rows : {AllRows(out_dim), RowRange{8, out_dim - 3}, RowRange{5, 20}}) {
        ExpectSameBits(Matmul(vnni, DType::kQ8_0, w, xq, 0, n, in_dim, out_dim, rows),
                       Matmul(avx2, DType::kQ8_0, w, xq, 0, n, in_dim, out_dim, rows),
                       "in " + std::to_string(in_dim) + " n " + std::to_string(n) + " rows " +
                           std::to_string(rows.begin) + ".." + std::to_string(rows.end));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Flavours, VnniMatmulTest,
    ::testing::Values(Flavour{Isa::kAmx}, Flavour{Isa::kAvx512}, Flavour{Isa::kAvxVnni},
                      Flavour{Isa::kAvx2, &testing::EmulatedVnniKernelTable, "emulated"},
                      Flavour{Isa::kAvx2, &testing::EmulatedAmxKernelTable, "amx_emulated"},
                      Flavour{Isa::kAvx2, &testing::EmulatedZmmKernelTable, "zmm_emulated"}),
    [](const ::testing::TestParamInfo<Flavour>& info) { return info.param.Name(); });

}  // namespace
}  // namespace smallmind::kernels
