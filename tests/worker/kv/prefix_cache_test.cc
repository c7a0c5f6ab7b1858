#include "worker/kv/prefix_cache.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace smallmind::worker {
namespace {

using kernels::ExecMode;

constexpr int kBs = 4;

std::vector<TokenId> Range(int first, int n) {
  std::vector<TokenId> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

std::vector<TokenId> Concat(std::vector<TokenId> a, const std::vector<TokenId>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// One sequence as the scheduler drives it: admitted with its cached prefix, then computed in full
// (blocks allocated for the rest), then optionally finished.
struct Seq {
  explicit Seq(std::vector<TokenId> t) : tokens(std::move(t)) {}
  std::vector<TokenId> tokens;
  std::vector<int32_t> blocks;
  int cached = 0;

  void Admit(PrefixCache& cache, BlockPool& pool, ExecMode mode = ExecMode::kParallel) {
    const PrefixCache::Match m = cache.Find(tokens, mode);
    cached = cache.Acquire(tokens, mode, m.blocks, &blocks);
    const int need = (static_cast<int>(tokens.size()) + kBs - 1) / kBs - m.blocks;
    ASSERT_TRUE(pool.AllocateN(need, &blocks));
    cache.OnComputed(tokens, static_cast<int>(tokens.size()), mode, blocks);
  }
};

struct Fixture {
  explicit Fixture(int blocks = 16, PrefixCacheOptions options = {})
      : pool(blocks, kBs), cache(&pool, options) {}
  BlockPool pool;
  PrefixCache cache;
};

TEST(PrefixCacheTest, ASecondSequenceReusesEveryLeadingFullBlockOfTheFirst) {
  Fixture f;
  Seq a(Concat(Range(100, 12), Range(0, 3)));  // 3 full blocks + 3 tokens
  a.Admit(f.cache, f.pool);
  EXPECT_EQ(a.cached, 0);
  Seq b(Concat(Range(100, 12), Range(50, 6)));  // same 3 blocks, then different
  b.Admit(f.cache, f.pool);
  EXPECT_EQ(b.cached, 12);
  EXPECT_EQ(std::vector<int32_t>(b.blocks.begin(), b.blocks.begin() + 3),
            std::vector<int32_t>(a.blocks.begin(), a.blocks.begin() + 3));
  EXPECT_EQ(f.pool.ref_count(a.blocks[0]), 2);
  EXPECT_EQ(f.pool.ref_count(a.blocks[3]), 1);  // the partial block is never shared
  const PrefixCacheCounters& c = f.cache.counters();
  EXPECT_EQ(c.lookups, 2u);
  EXPECT_EQ(c.hits, 1u);
  EXPECT_EQ(c.hit_blocks, 3u);
  EXPECT_EQ(c.hit_tokens, 12u);
}

TEST(PrefixCacheTest, TheLastTokenIsAlwaysComputedEvenWhenTheWholePromptIsCached) {
  Fixture f;
  Seq a(Range(0, 8));  // exactly two blocks
  a.Admit(f.cache, f.pool);
  const PrefixCache::Match m = f.cache.Find(Range(0, 8), ExecMode::kParallel);
  EXPECT_EQ(m.blocks, 1);  // the second block holds the last token: recomputed for its logits
  EXPECT_EQ(f.cache.Find(Range(0, 9), ExecMode::kParallel).blocks, 2);
}

TEST(PrefixCacheTest, ABlockIsNamedByItsWholePrefixNotOnlyItsOwnTokens) {
  Fixture f;
  Seq a(Concat(Range(0, 4), Range(40, 5)));
  a.Admit(f.cache, f.pool);
  // Same second block, different first block: nothing matches.
  EXPECT_EQ(f.cache.Find(Concat(Range(1, 4), Range(40, 5)), ExecMode::kParallel).blocks, 0);
  EXPECT_EQ(f.cache.Find(Concat(Range(0, 4), Range(40, 5)), ExecMode::kParallel).blocks, 2);
}

TEST(PrefixCacheTest, DifferentRootsKeepThePathsApart) {
  PrefixCacheOptions options;
  options.deterministic_root = 11;
  options.parallel_root = 12;
  Fixture f(16, options);
  Seq a(Range(0, 9));
  a.Admit(f.cache, f.pool, ExecMode::kParallel);
  EXPECT_EQ(f.cache.Find(Range(0, 9), ExecMode::kDeterministic).blocks, 0);
  EXPECT_EQ(f.cache.Find(Range(0, 9), ExecMode::kParallel).blocks, 2);
}

TEST(PrefixCacheTest, EqualRootsShareBlocksAcrossPaths) {
  Fixture f;  // default options: one root
  Seq a(Range(0, 9));
  a.Admit(f.cache, f.pool, ExecMode::kParallel);
  EXPECT_EQ(f.cache.Find(Range(0, 9), ExecMode::kDeterministic).blocks, 2);
}

TEST(PrefixCacheTest, FinishedSequencesLeaveTheirBlocksCachedUntilThePoolNeedsRoom) {
  Fixture f(4);
  Seq a(Range(0, 13));  // 3 full blocks + 1 token
  a.Admit(f.cache, f.pool);
  f.cache.Release(&a.blocks);
  EXPECT_TRUE(a.blocks.empty());
  EXPECT_EQ(f.pool.num_cached(), 3);
  EXPECT_EQ(f.pool.num_used(), 0);
  PrefixCache::Match m = f.cache.Find(Range(0, 13), ExecMode::kParallel);
  EXPECT_EQ(m.blocks, 3);
  EXPECT_EQ(m.evictable, 3);
  // An unrelated sequence needing 2 blocks takes the free one, then evicts the deepest cached
  // block (released first), so the remaining chain stays usable from its start.
  Seq b(Range(500, 5));
  b.Admit(f.cache, f.pool);
  EXPECT_EQ(f.pool.evictions(), 1u);
  EXPECT_EQ(f.cache.Find(Range(0, 13), ExecMode::kParallel).blocks, 2);
}

TEST(PrefixCacheTest, FindCountsCachedBlocksNobodyReferencesAsEvictable) {
  Fixture f;
  Seq a(Range(0, 9));
  a.Admit(f.cache, f.pool);
  EXPECT_EQ(f.cache.Find(Range(0, 9), ExecMode::kParallel).evictable, 0);  // a still holds them
  f.cache.Release(&a.blocks);
  EXPECT_EQ(f.cache.Find(Range(0, 9), ExecMode::kParallel).evictable, 2);
}

TEST(PrefixCacheTest, DecodedTokensFillAndSealBlocksToo) {
  Fixture f;
  Seq a(Range(0, 3));
  a.Admit(f.cache, f.pool);
  EXPECT_EQ(f.pool.tokens_in_used_blocks(), 3);
  // Two tokens decoded one step at a time: the first one completes block 0.
  for (TokenId t : {3, 4}) {
    a.tokens.push_back(t);
    if (a.tokens.size() > a.blocks.size() * kBs) {
      ASSERT_TRUE(f.pool.AllocateN(1, &a.blocks));
    }
    f.cache.OnComputed(a.tokens, static_cast<int>(a.tokens.size()), ExecMode::kParallel, a.blocks);
  }
  EXPECT_TRUE(f.pool.sealed(a.blocks[0]));
  EXPECT_FALSE(f.pool.sealed(a.blocks[1]));
  EXPECT_EQ(f.pool.tokens_in_used_blocks(), 5);
  EXPECT_EQ(f.cache.Find(Range(0, 6), ExecMode::kParallel).blocks, 1);
}

TEST(PrefixCacheTest, ADisabledCacheFindsNothingButStillCountsStoredTokens) {
  PrefixCacheOptions options;
  options.enabled = false;
  Fixture f(16, options);
  Seq a(Range(0, 9));
  a.Admit(f.cache, f.pool);
  Seq b(Range(0, 9));
  b.Admit(f.cache, f.pool);
  EXPECT_EQ(b.cached, 0);
  EXPECT_EQ(f.pool.num_used(), 6);
  EXPECT_EQ(f.pool.tokens_in_used_blocks(), 18);
  EXPECT_EQ(f.cache.counters().lookups, 0u);
  f.cache.Release(&a.blocks);
  EXPECT_EQ(f.pool.num_cached(), 0);
}

// Every layer windowed: blocks wholly before the next query's window are released (kept cached
// for reuse), except the newest named block behind it while its successor is not full.
TEST(PrefixCacheTest, ReleaseBehindWindowDropsOnlyBlocksNoLaterQuerySees) {
  Fixture f;
  Seq a(Range(100, 18));  // 4 full blocks + 2 tokens
  a.Admit(f.cache, f.pool);
  int released = 0;
  // The query at 18 with a window of 9 sees 10..18: blocks 0 and 1 (positions 0..7) are behind.
  f.cache.ReleaseBehindWindow(9, 18, &a.blocks, &released);
  EXPECT_EQ(released, 2);
  EXPECT_EQ(a.blocks[0], kNoBlock);
  EXPECT_EQ(a.blocks[1], kNoBlock);
  EXPECT_NE(a.blocks[2], kNoBlock);
  EXPECT_EQ(f.pool.num_used(), 3);
  EXPECT_EQ(f.pool.num_cached(), 2);  // still a prefix for the next prompt
  Seq b(Range(100, 18));
  b.Admit(f.cache, f.pool);
  EXPECT_EQ(b.cached, 16);
  // A window of one at 18 sees only 18; block 3 (12..15) stays: block 4 is not full.
  f.cache.ReleaseBehindWindow(1, 18, &a.blocks, &released);
  EXPECT_EQ(released, 3);
  EXPECT_NE(a.blocks[3], kNoBlock);
  // Releasing the table skips the released entries.
  f.cache.Release(&a.blocks);
  EXPECT_TRUE(a.blocks.empty());
  f.cache.Release(&b.blocks);
  EXPECT_EQ(f.pool.num_used(), 0);
}

}  // namespace
}  // namespace smallmind::worker
