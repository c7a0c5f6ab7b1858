// Attention sinks (AttentionArgs::sinks, gpt-oss): the reference against a float64 softmax whose
// denominator holds one more logit per head, every SIMD kernel against the reference over float,
// half and kQ8 caches with and without a window, the same bits for a token whatever the prefill
// chunks around it, and the limits: a very negative sink is no sink, a dominant one empties the
// output.
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

// A cache of `length` positions, queries of n_tokens tokens from start_pos and one sink per head.
struct SinkCase {
  int n_heads, n_kv_heads, head_dim, start_pos, n_tokens;
  std::vector<float> storage, q, scores, sinks;
  std::vector<uint16_t> halves;
  std::vector<int8_t> q8;
  std::vector<int32_t> table;

  SinkCase(int heads, int kv_heads, int hd, int start, int tokens)
      : n_heads(heads), n_kv_heads(kv_heads), head_dim(hd), start_pos(start), n_tokens(tokens) {
    const int kv_dim = n_kv_heads * head_dim;
    const int n_blocks = (start_pos + n_tokens + kBlock - 1) / kBlock;
    storage = RandomFloats(size_t(n_blocks) * 2 * kBlock * kv_dim, 31 + hd);
    halves = Halves(storage);
    q8 = Q8Rows(storage, kv_dim);
    table = ScrambledTable(n_blocks, n_blocks % 3 == 0 ? 5 : 3, 1);
    q = RandomFloats(size_t(n_tokens) * n_heads * head_dim, 7 + tokens, -2, 2);
    // Sinks around the scores' scale (|score| ~ 1): each takes a real share of its softmax.
    sinks = RandomFloats(size_t(n_heads), 3 + heads, -2, 3);
    scores.assign(size_t(n_tokens * n_heads + kAttentionHeadsPerPass) * (start_pos + n_tokens + 32),
                  0.0f);
  }

  AttentionArgs Args(KvType type, int window = 0) {
    AttentionArgs a = PagedArgs(storage, table, q, &scores, kBlock, n_heads, n_kv_heads, head_dim,
                                start_pos, n_tokens);
    a.window = window;
    a.sinks = sinks.data();
    if (type == KvType::kF16) UseHalves(halves, kBlock, &a);
    if (type == KvType::kQ8) UseQ8(q8, kBlock, n_kv_heads * head_dim, &a);
    return a;
  }

  std::string Text() const {
    return "heads " + std::to_string(n_heads) + "/" + std::to_string(n_kv_heads) + " hd " +
           std::to_string(head_dim) + " from " + std::to_string(start_pos) + " tokens " +
           std::to_string(n_tokens);
  }
};

TEST(AttentionSinksTest, ReferenceIsTheFloat64SoftmaxWithTheSinkInItsDenominator) {
  SinkCase c(4, 2, 8, 9, 7);
  for (int window : {0, 5}) {
    const AttentionArgs a = c.Args(KvType::kF32, window);
    const std::vector<float> out = Chunked(&AttentionRef, a, c.n_tokens);
    const int kv_dim = c.n_kv_heads * c.head_dim;
    for (int t = 0; t < c.n_tokens; t++) {
      const int pos = c.start_pos + t;
      const int first = a.FirstPos(pos);
      for (int h = 0; h < c.n_heads; h++) {
        const int kv_off = h / (c.n_heads / c.n_kv_heads) * c.head_dim;
        const float* qh = c.q.data() + (t * c.n_heads + h) * c.head_dim;
        std::vector<double> w;
        double max_w = c.sinks[h];
        for (int p = first; p <= pos; p++) {
          double dot = 0;
          for (int i = 0; i < c.head_dim; i++) {
            dot += qh[i] * double{c.storage[a.kv.Offset(p) + kv_off + i]};
          }
          w.push_back(dot / std::sqrt(static_cast<double>(c.head_dim)));
          max_w = std::max(max_w, w.back());
        }
        double sum = std::exp(c.sinks[h] - max_w);  // the sink has no value row
        for (double& x : w) sum += (x = std::exp(x - max_w));
        for (int i = 0; i < c.head_dim; i++) {
          double want = 0;
          for (int p = first; p <= pos; p++) {
            want += w[p - first] / sum * c.storage[a.kv.Offset(p) + kBlock * kv_dim + kv_off + i];
          }
          EXPECT_NEAR(out[(t * c.n_heads + h) * c.head_dim + i], want, 1e-5)
              << "window " << window << " token " << t << " head " << h;
        }
      }
    }
  }
}

TEST(AttentionSinksTest, AVeryNegativeSinkIsNoneAndADominantOneEmptiesTheOutput) {
  SinkCase c(4, 2, 32, 3, 5);
  AttentionArgs a = c.Args(KvType::kF32);
  a.sinks = nullptr;
  const std::vector<float> plain = Chunked(&AttentionRef, a, c.n_tokens);
  std::vector<float> sinks(c.n_heads, -1e30f);
  a.sinks = sinks.data();
  EXPECT_EQ(Chunked(&AttentionRef, a, c.n_tokens), plain);
  std::fill(sinks.begin(), sinks.end(), 200.0f);  // exp(200 - score) overflows nothing but wins
  for (float v : Chunked(&AttentionRef, a, c.n_tokens)) EXPECT_NEAR(v, 0.0f, 1e-30f);
  std::vector<std::pair<AttentionFn, Isa>> fns = {{&avx2::AttentionAvx2, Isa::kAvx2},
                                                  {&avx512::AttentionAvx512, Isa::kAvx512}};
  for (auto [fn, isa] : fns) {
    if (!CpuSupports(isa)) continue;
    for (float v : Chunked(fn, a, c.n_tokens)) EXPECT_NEAR(v, 0.0f, 1e-30f) << IsaName(isa);
  }
}

// Each SIMD kernel the dispatcher may pick against the reference, with and without a window, and
// bit for bit against itself when the prompt is chunked (calls of 3 tokens, one token a call).
void ExpectKernelMatchesRefWithSinks(AttentionFn fn, const std::string& name) {
  std::vector<SinkCase> cases;
  cases.emplace_back(4, 2, 64, 40, 1);  // decode
  cases.emplace_back(4, 2, 64, 3, 17);  // a prefill chunk
  cases.emplace_back(6, 6, 32, 0, 12);  // MHA from the first position
  cases.emplace_back(8, 2, 32, 20, 9);
  cases.emplace_back(6, 3, 24, 30, 6);  // a head size the packs do not take
  int checked = 0;
  for (SinkCase& c : cases) {
    for (KvType type : {KvType::kF32, KvType::kF16, KvType::kQ8}) {
      for (int window : {0, 8}) {
        const std::string what = name + " " + c.Text() + " type " + std::to_string(int(type)) +
                                 " window " + std::to_string(window);
        ExpectMatchesRefAndChunkInvariant(fn, c.Args(type, window),
                                          type == KvType::kQ8 ? 2e-3f : 1e-5f, what);
        if (::testing::Test::HasFatalFailure()) return;
        checked++;
      }
    }
  }
  EXPECT_EQ(checked, 5 * 3 * 2);
}

TEST(AttentionSinksTest, Avx2KernelMatchesTheReferenceAndIsChunkInvariant) {
  if (!CpuSupports(Isa::kAvx2)) GTEST_SKIP() << "this CPU has no AVX2";
  ExpectKernelMatchesRefWithSinks(&avx2::AttentionAvx2, "avx2");
}

TEST(AttentionSinksTest, Avx512KernelMatchesTheReferenceAndIsChunkInvariant) {
  if (!CpuSupports(Isa::kAvx512)) GTEST_SKIP() << "this CPU has no AVX-512 (F/BW/DQ/VL/VNNI)";
  ExpectKernelMatchesRefWithSinks(&avx512::AttentionAvx512, "avx512");
}

}  // namespace
}  // namespace smallmind::kernels
