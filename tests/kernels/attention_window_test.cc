// Sliding-window attention (AttentionArgs::window) in every attention kernel: the reference against
// a float64 windowed softmax, each SIMD kernel against the reference over float, half and kQ8
// caches, no read of a block wholly before the window (its table entry points at a block of NaN),
// and the same bits for a token whatever the rows, tokens and prefill chunks around it.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/avx2/kernels_avx2.h"
#include "kernels/avx512/kernels_avx512.h"
#include "kernels/dispatch.h"
#include "kernels/ref/attention_ref.h"
#include "tests/kernels/attention_chunks.h"
#include "tests/kernels/paged_attention.h"
#include "tests/kernels/random_weights.h"

namespace smallmind::kernels {
namespace {

using testing::Chunked;
using testing::ExpectMatchesRefAndChunkInvariant;
using testing::Halves;
using testing::PagedArgs;
using testing::Q8Rows;
using testing::RandomFloats;
using testing::ScrambledTable;
using testing::UseHalves;
using testing::UseQ8;

constexpr int kBlock = 4;

// A window case over a paged cache of `length` positions whose table entries for blocks wholly
// before the first query's window point at an extra block of NaN.
struct WindowCase {
  int n_heads, n_kv_heads, head_dim, start_pos, n_tokens, window;
  std::vector<float> storage, q, scores;
  std::vector<uint16_t> halves;
  std::vector<int8_t> q8;
  std::vector<int32_t> table;

  WindowCase(int heads, int kv_heads, int hd, int start, int tokens, int w)
      : n_heads(heads),
        n_kv_heads(kv_heads),
        head_dim(hd),
        start_pos(start),
        n_tokens(tokens),
        window(w) {
    const int kv_dim = n_kv_heads * head_dim;
    const int length = start_pos + n_tokens;
    const int n_blocks = (length + kBlock - 1) / kBlock;
    const int poison = n_blocks;  // the extra block's id
    storage = RandomFloats(size_t(n_blocks + 1) * 2 * kBlock * kv_dim, 11 + hd);
    for (size_t i = size_t(poison) * 2 * kBlock * kv_dim; i < storage.size(); i++) {
      storage[i] = NAN;
    }
    halves = Halves(storage);
    q8 = Q8Rows(storage, kv_dim);
    table = ScrambledTable(n_blocks, n_blocks % 3 == 0 ? 5 : 3, 1);
    const int first_seen = start_pos >= window ? start_pos - window + 1 : 0;
    for (int b = 0; (b + 1) * kBlock <= first_seen; b++) table[b] = poison;
    q = RandomFloats(size_t(n_tokens) * n_heads * head_dim, 5 + tokens, -2, 2);
    scores.assign(size_t(n_tokens * n_heads + kAttentionHeadsPerPass) * (length + 32), 0.0f);
  }

  AttentionArgs Args(KvType type) {
    AttentionArgs a = PagedArgs(storage, table, q, &scores, kBlock, n_heads, n_kv_heads, head_dim,
                                start_pos, n_tokens);
    a.window = window;
    if (type == KvType::kF16) UseHalves(halves, kBlock, &a);
    if (type == KvType::kQ8) UseQ8(q8, kBlock, n_kv_heads * head_dim, &a);
    return a;
  }

  std::string Text() const {
    return "heads " + std::to_string(n_heads) + "/" + std::to_string(n_kv_heads) + " hd " +
           std::to_string(head_dim) + " from " + std::to_string(start_pos) + " tokens " +
           std::to_string(n_tokens) + " window " + std::to_string(window);
  }
};

std::vector<WindowCase> Cases() {
  std::vector<WindowCase> cases;
  // Decode past the window, a prefill chunk crossing its start, a chunk wholly inside it, a window
  // shorter than the chunk, a window of one, GQA and MHA, head sizes the packs take and not.
  cases.emplace_back(4, 2, 64, 40, 1, 9);
  cases.emplace_back(4, 2, 64, 3, 17, 8);
  cases.emplace_back(6, 6, 32, 0, 12, 16);
  cases.emplace_back(8, 2, 32, 20, 9, 3);
  cases.emplace_back(4, 1, 64, 13, 5, 1);
  cases.emplace_back(6, 3, 24, 30, 6, 10);
  return cases;
}

TEST(AttentionWindowTest, ReferenceIsTheFloat64SoftmaxOverTheWindowOnly) {
  WindowCase c(4, 2, 8, 9, 7, 5);
  const AttentionArgs a = c.Args(KvType::kF32);
  const std::vector<float> out = Chunked(&AttentionRef, a, c.n_tokens);
  const int kv_dim = c.n_kv_heads * c.head_dim;
  for (int t = 0; t < c.n_tokens; t++) {
    const int pos = c.start_pos + t;
    for (int h = 0; h < c.n_heads; h++) {
      const int kv_off = h / (c.n_heads / c.n_kv_heads) * c.head_dim;
      const float* qh = c.q.data() + (t * c.n_heads + h) * c.head_dim;
      std::vector<double> w;
      double max_w = -1e300, sum = 0;
      for (int p = pos - c.window + 1; p <= pos; p++) {  // llama.cpp: masked when pos - p >= W
        double dot = 0;
        for (int i = 0; i < c.head_dim; i++) {
          dot += qh[i] * double{c.storage[a.kv.Offset(p) + kv_off + i]};
        }
        w.push_back(dot / std::sqrt(static_cast<double>(c.head_dim)));
        max_w = std::max(max_w, w.back());
      }
      for (double& x : w) sum += (x = std::exp(x - max_w));
      for (int i = 0; i < c.head_dim; i++) {
        double want = 0;
        for (int j = 0; j < c.window; j++) {
          const int p = pos - c.window + 1 + j;
          want += w[j] / sum * c.storage[a.kv.Offset(p) + kBlock * kv_dim + kv_off + i];
        }
        EXPECT_NEAR(out[(t * c.n_heads + h) * c.head_dim + i], want, 1e-5) << t << " " << h;
      }
    }
  }
}

TEST(AttentionWindowTest, WindowAsLongAsTheContextChangesNothing) {
  WindowCase c(4, 2, 64, 5, 11, 16);  // positions 5..15 all see 0..
  AttentionArgs a = c.Args(KvType::kF32);
  const std::vector<float> windowed = Chunked(&avx2::AttentionAvx2, a, c.n_tokens);
  a.window = 0;
  EXPECT_EQ(windowed, Chunked(&avx2::AttentionAvx2, a, c.n_tokens));
}

// Each kernel the dispatcher may pick against the reference, and bit for bit against itself when
// the prompt is chunked (one call, calls of 3 tokens, one token a call): batch invariance.
void ExpectKernelMatchesRefAndItsOwnChunking(AttentionFn fn, const std::string& name) {
  int checked = 0;
  for (WindowCase& c : Cases()) {
    for (KvType type : {KvType::kF32, KvType::kF16, KvType::kQ8}) {
      const std::string what = name + " " + c.Text() + " type " + std::to_string(int(type));
      ExpectMatchesRefAndChunkInvariant(fn, c.Args(type), type == KvType::kQ8 ? 2e-3f : 1e-5f,
                                        what);
      if (::testing::Test::HasFatalFailure()) return;
      checked++;
    }
  }
  EXPECT_EQ(checked, 6 * 3);
}

TEST(AttentionWindowTest, Avx2KernelMatchesTheReferenceAndIsChunkInvariant) {
  if (!CpuSupports(Isa::kAvx2)) GTEST_SKIP() << "this CPU has no AVX2";
  ExpectKernelMatchesRefAndItsOwnChunking(&avx2::AttentionAvx2, "avx2");
}

TEST(AttentionWindowTest, Avx512KernelMatchesTheReferenceAndIsChunkInvariant) {
  if (!CpuSupports(Isa::kAvx512)) GTEST_SKIP() << "this CPU has no AVX-512 (F/BW/DQ/VL/VNNI)";
  ExpectKernelMatchesRefAndItsOwnChunking(&avx512::AttentionAvx512, "avx512");
}

TEST(AttentionWindowTest, Avx512KernelHasTheAvx2KernelsBits) {
  if (!CpuSupports(Isa::kAvx512)) GTEST_SKIP() << "this CPU has no AVX-512 (F/BW/DQ/VL/VNNI)";
  for (WindowCase& c : Cases()) {
    for (KvType type : {KvType::kF32, KvType::kF16, KvType::kQ8}) {
      const AttentionArgs a = c.Args(type);
      const std::vector<float> want = Chunked(&avx2::AttentionAvx2, a, c.n_tokens);
      const std::vector<float> got = Chunked(&avx512::AttentionAvx512, a, c.n_tokens);
      for (size_t i = 0; i < want.size(); i++) {
        ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
            << c.Text() << " type " << int(type) << " at " << i;
      }
    }
  }
}

// Soft-capping (gemma2) and a score divisor other than sqrt(head_dim): the reference against a
// float64 computation, and every SIMD kernel against the reference, with and without a window.
TEST(AttentionWindowTest, SoftCapAndScoreDivisorMatchTheFloat64FormulaInEveryKernel) {
  WindowCase c(4, 2, 32, 6, 5, 7);
  AttentionArgs a = c.Args(KvType::kF32);
  a.score_divisor = 3.0f;
  a.softcap = 0.5f;  // tight, so that the cap changes the weights a lot
  const std::vector<float> ref = Chunked(&AttentionRef, a, c.n_tokens);
  const int kv_dim = c.n_kv_heads * c.head_dim;
  for (int t = 0; t < c.n_tokens; t++) {
    const int pos = c.start_pos + t;
    const int first = std::max(0, pos - c.window + 1);
    for (int h = 0; h < c.n_heads; h++) {
      const int kv_off = h / (c.n_heads / c.n_kv_heads) * c.head_dim;
      const float* qh = c.q.data() + (t * c.n_heads + h) * c.head_dim;
      std::vector<double> w;
      double sum = 0;
      for (int p = first; p <= pos; p++) {
        double dot = 0;
        for (int i = 0; i < c.head_dim; i++) {
          dot += qh[i] * double{c.storage[a.kv.Offset(p) + kv_off + i]};
        }
        w.push_back(std::exp(0.5 * std::tanh(dot / 3.0 / 0.5)));  // |capped| <= 0.5: no max
        sum += w.back();
      }
      for (int i = 0; i < c.head_dim; i++) {
        double want = 0;
        for (int p = first; p <= pos; p++) {
          want += w[p - first] / sum * c.storage[a.kv.Offset(p) + kBlock * kv_dim + kv_off + i];
        }
        EXPECT_NEAR(ref[(t * c.n_heads + h) * c.head_dim + i], want, 1e-5) << t << " " << h;
      }
    }
  }
  std::vector<std::pair<AttentionFn, Isa>> fns = {{&avx2::AttentionAvx2, Isa::kAvx2},
                                                  {&avx512::AttentionAvx512, Isa::kAvx512}};
  for (auto [fn, isa] : fns) {
    if (!CpuSupports(isa)) continue;
    for (int window : {0, 7}) {
      a.window = window;
      const std::vector<float> want = Chunked(&AttentionRef, a, c.n_tokens);
      const std::vector<float> got = Chunked(fn, a, c.n_tokens);
      for (size_t i = 0; i < want.size(); i++) {
        ASSERT_NEAR(got[i], want[i], 1e-5) << IsaName(isa) << " window " << window << " at " << i;
      }
      EXPECT_EQ(Chunked(fn, a, 1), got) << IsaName(isa) << ": chunking changed a bit";
    }
  }
}

}  // namespace
}  // namespace smallmind::kernels
