#include "kernels/ref/attention_ref.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace smallmind::kernels {
namespace {

constexpr int kHeads = 4, kKvHeads = 2, kHeadDim = 4, kKvDim = kKvHeads * kHeadDim;
constexpr int kBlockSize = 3, kNumBlocks = 5;

// A paged cache laid out as KvPool does: [block][K, V][slot][kv_dim], filled from contiguous
// per-position rows through a scrambled block table.
struct PagedCache {
  std::vector<float> k_rows, v_rows;  // [positions, kv_dim] as the positions see them
  std::vector<float> storage = std::vector<float>(kNumBlocks * 2 * kBlockSize * kKvDim, 0.0f);
  std::vector<int32_t> table = {2, 0, 4};  // covers 9 positions

  explicit PagedCache(int n_positions) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    k_rows.resize(n_positions * kKvDim);
    v_rows.resize(n_positions * kKvDim);
    for (float& x : k_rows) x = dist(rng);
    for (float& x : v_rows) x = dist(rng);
    const KvView v = View();
    for (int p = 0; p < n_positions; p++) {
      for (int i = 0; i < kKvDim; i++) {
        storage[v.Offset(p) + i] = k_rows[p * kKvDim + i];
        storage[v.Offset(p) + kBlockSize * kKvDim + i] = v_rows[p * kKvDim + i];
      }
    }
  }
  KvView View() const {
    KvView v;
    v.k = storage.data();
    v.v = storage.data() + kBlockSize * kKvDim;
    v.block_table = table;
    v.block_size = kBlockSize;
    v.block_stride = 2 * kBlockSize * kKvDim;
    v.row_stride = kKvDim;
    return v;
  }
};

AttentionArgs MakeArgs(const std::vector<float>& q, std::vector<float>& out,
                       std::vector<float>& scores, int n_tokens, int start_pos,
                       const PagedCache& cache) {
  AttentionArgs a;
  a.q = q.data();
  a.out = out.data();
  a.scores = scores.data();
  a.n_tokens = n_tokens;
  a.start_pos = start_pos;
  a.n_heads = kHeads;
  a.n_kv_heads = kKvHeads;
  a.head_dim = kHeadDim;
  a.kv = cache.View();
  return a;
}

TEST(AttentionRefTest, MatchesFloat64CausalGqaAttentionThroughScrambledBlocks) {
  const int start_pos = 5, n_tokens = 4;  // positions 5..8
  PagedCache cache(start_pos + n_tokens);
  std::vector<float> q(n_tokens * kHeads * kHeadDim);
  for (size_t i = 0; i < q.size(); i++) q[i] = std::sin(1.3f * static_cast<float>(i));
  std::vector<float> out(q.size()), scores(start_pos + n_tokens);
  AttentionRef(MakeArgs(q, out, scores, n_tokens, start_pos, cache), AllRows(n_tokens * kHeads));

  for (int t = 0; t < n_tokens; t++) {
    for (int h = 0; h < kHeads; h++) {
      const int kv_h = h / (kHeads / kKvHeads);
      const float* qh = q.data() + (t * kHeads + h) * kHeadDim;
      std::vector<double> w(start_pos + t + 1);
      double max_w = -1e300, sum = 0;
      for (int p = 0; p <= start_pos + t; p++) {
        double dot = 0;
        for (int i = 0; i < kHeadDim; i++)
          dot += qh[i] * double{cache.k_rows[p * kKvDim + kv_h * kHeadDim + i]};
        w[p] = dot / std::sqrt(double{kHeadDim});
        max_w = std::max(max_w, w[p]);
      }
      for (double& x : w) sum += (x = std::exp(x - max_w));
      for (int i = 0; i < kHeadDim; i++) {
        double want = 0;
        for (size_t p = 0; p < w.size(); p++)
          want += w[p] / sum * cache.v_rows[p * kKvDim + kv_h * kHeadDim + i];
        EXPECT_NEAR(out[(t * kHeads + h) * kHeadDim + i], want, 1e-5) << "t" << t << " h" << h;
      }
    }
  }
}

TEST(AttentionRefTest, FirstPositionReturnsItsOwnValueRow) {
  PagedCache cache(1);
  std::vector<float> q(kHeads * kHeadDim, 0.3f), out(q.size()), scores(1);
  AttentionRef(MakeArgs(q, out, scores, 1, 0, cache), AllRows(kHeads));
  for (int h = 0; h < kHeads; h++) {
    for (int i = 0; i < kHeadDim; i++) {
      EXPECT_EQ(out[h * kHeadDim + i], cache.v_rows[(h / 2) * kHeadDim + i]) << h << "," << i;
    }
  }
}

TEST(AttentionRefTest, WritesOnlyTheTokenHeadRowsOfItsRange) {
  PagedCache cache(4);
  std::vector<float> q(2 * kHeads * kHeadDim, 0.1f), scores(4);
  std::vector<float> out(q.size(), 99.0f);
  AttentionRef(MakeArgs(q, out, scores, 2, 2, cache), RowRange{3, 5});  // (t0, h3), (t1, h0)
  for (int r = 0; r < 2 * kHeads; r++) {
    const bool inside = r == 3 || r == 4;
    EXPECT_EQ(out[r * kHeadDim] == 99.0f, !inside) << "row " << r;
  }
}

}  // namespace
}  // namespace smallmind::kernels
