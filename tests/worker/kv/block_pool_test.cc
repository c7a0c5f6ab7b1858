#include "worker/kv/block_pool.h"

#include <gtest/gtest.h>

#include <vector>

#include "worker/kv/block_hash.h"

namespace smallmind::worker {
namespace {

constexpr int kBs = 4;

std::vector<TokenId> Tokens(int first) { return {first, first + 1, first + 2, first + 3}; }

// Allocates a block, fills it with Tokens(first) under `parent`, seals it and returns it (still
// referenced once).
int32_t SealedBlock(BlockPool& pool, uint64_t parent, int first, uint64_t* hash = nullptr) {
  const int32_t b = *pool.Allocate();
  const std::vector<TokenId> t = Tokens(first);
  const uint64_t h = KvBlockHash(parent, t);
  EXPECT_TRUE(pool.Seal(b, parent, h, t));
  if (hash) *hash = h;
  return b;
}

TEST(BlockPoolTest, HandsOutEveryBlockOnceThenReportsExhaustion) {
  BlockPool pool(3);
  std::vector<int32_t> got;
  for (int i = 0; i < 3; ++i) got.push_back(*pool.Allocate());
  EXPECT_EQ(got, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_FALSE(pool.Allocate().has_value());
  EXPECT_EQ(pool.num_used(), 3);
}

TEST(BlockPoolTest, AllocateNIsAllOrNothing) {
  BlockPool pool(4);
  std::vector<int32_t> a;
  EXPECT_TRUE(pool.AllocateN(3, &a));
  std::vector<int32_t> b;
  EXPECT_FALSE(pool.AllocateN(2, &b));
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(pool.num_free(), 1);
}

TEST(BlockPoolTest, SharedBlockIsFreedOnlyAfterLastRelease) {
  BlockPool pool(1);
  int32_t id = *pool.Allocate();
  pool.AddRef(id);
  pool.Release(id);
  EXPECT_EQ(pool.num_free(), 0);
  pool.Release(id);
  EXPECT_EQ(pool.num_free(), 1);
}

TEST(BlockPoolTest, ReleasedSealedBlockStaysCachedAndFindable) {
  BlockPool pool(2, kBs);
  uint64_t h = 0;
  const int32_t b = SealedBlock(pool, 1, 10, &h);
  pool.Release(b);
  EXPECT_EQ(pool.num_cached(), 1);
  EXPECT_EQ(pool.num_free(), 2);  // cached blocks can still be handed out
  EXPECT_EQ(pool.num_used(), 0);
  EXPECT_EQ(pool.FindSealed(h, Tokens(10)), b);
  EXPECT_EQ(pool.FindSealed(h, Tokens(11)), -1);  // same hash, other tokens: a collision
}

TEST(BlockPoolTest, HandsOutFreeBlocksBeforeEvictingCachedOnes) {
  BlockPool pool(3, kBs);
  uint64_t h = 0;
  const int32_t cached = SealedBlock(pool, 1, 10, &h);
  pool.Release(cached);
  const int32_t a = *pool.Allocate();
  const int32_t b = *pool.Allocate();
  EXPECT_NE(a, cached);
  EXPECT_NE(b, cached);
  EXPECT_EQ(pool.evictions(), 0u);
  EXPECT_EQ(pool.FindSealed(h, Tokens(10)), cached);
  EXPECT_EQ(*pool.Allocate(), cached);  // no free block left: the cached one goes
  EXPECT_EQ(pool.evictions(), 1u);
  EXPECT_EQ(pool.FindSealed(h, Tokens(10)), -1);
  EXPECT_FALSE(pool.sealed(cached));
}

TEST(BlockPoolTest, EvictsTheLeastRecentlyReleasedCachedBlockFirst) {
  BlockPool pool(3, kBs);
  const int32_t x = SealedBlock(pool, 1, 10);
  const int32_t y = SealedBlock(pool, 1, 20);
  const int32_t z = SealedBlock(pool, 1, 30);
  pool.Release(y);
  pool.Release(x);
  pool.Release(z);
  pool.AddRef(y);  // a hit on y makes it the most recently used once released again
  pool.Release(y);
  EXPECT_EQ(*pool.Allocate(), x);
  EXPECT_EQ(*pool.Allocate(), z);
  EXPECT_EQ(*pool.Allocate(), y);
  EXPECT_EQ(pool.evictions(), 3u);
}

TEST(BlockPoolTest, NeverEvictsAReferencedBlock) {
  BlockPool pool(3, kBs);
  uint64_t hx = 0, hy = 0;
  const int32_t x = SealedBlock(pool, 1, 10, &hx);
  const int32_t y = SealedBlock(pool, 1, 20, &hy);
  const int32_t z = SealedBlock(pool, 1, 30);
  pool.Release(y);
  pool.AddRef(y);  // a cached block taken again by a hit is referenced, not evictable
  pool.Release(z);
  EXPECT_EQ(*pool.Allocate(), z);
  EXPECT_FALSE(pool.Allocate().has_value());  // x and y are referenced: nothing to evict
  EXPECT_EQ(pool.FindSealed(hx, Tokens(10)), x);
  EXPECT_EQ(pool.FindSealed(hy, Tokens(20)), y);
  EXPECT_EQ(pool.evictions(), 1u);
}

TEST(BlockPoolTest, ADuplicateOfACachedBlockIsNamedButNotCached) {
  BlockPool pool(2, kBs);
  uint64_t h = 0;
  const int32_t first = SealedBlock(pool, 1, 10, &h);
  const int32_t dup = *pool.Allocate();
  EXPECT_FALSE(pool.Seal(dup, 1, h, Tokens(10)));
  EXPECT_EQ(pool.hash(dup), h);
  EXPECT_FALSE(pool.sealed(dup));
  pool.Release(dup);
  EXPECT_EQ(pool.num_cached(), 0);  // freed outright
  EXPECT_EQ(pool.FindSealed(h, Tokens(10)), first);
}

TEST(BlockPoolTest, CountsStoredTokensOfUsedBlocksOnce) {
  BlockPool pool(3, kBs);
  const int32_t full = SealedBlock(pool, 1, 10);
  const int32_t partial = *pool.Allocate();
  pool.SetTokenCount(partial, 3);
  EXPECT_EQ(pool.tokens_in_used_blocks(), 7);
  pool.AddRef(full);  // shared by a second sequence: still one block's tokens
  EXPECT_EQ(pool.tokens_in_used_blocks(), 7);
  pool.Release(full);
  pool.Release(full);
  EXPECT_EQ(pool.tokens_in_used_blocks(), 3);
  pool.Release(partial);
  EXPECT_EQ(pool.tokens_in_used_blocks(), 0);
}

// Warm restart: BlockPool over metadata a crashed owner left behind.
struct Segment {
  explicit Segment(int n) : meta(n), tokens(n * kBs) {}
  std::vector<shared::KvBlockMeta> meta;
  std::vector<int32_t> tokens;
};

TEST(BlockPoolTest, RestoreKeepsSealedChainsAndDropsIncompleteAndOrphanedBlocks) {
  Segment seg(9);
  const uint64_t root = 99;
  uint64_t h0 = 0, h1 = 0, h2 = 0, hp = 0;
  int32_t b0, b1, b2, partial, p, o, c;
  {
    BlockPool owner(seg.meta, seg.tokens, kBs);
    b0 = SealedBlock(owner, root, 0, &h0);
    b1 = SealedBlock(owner, h0, 4, &h1);
    b2 = SealedBlock(owner, h1, 8, &h2);  // still referenced at the crash: complete anyway
    partial = *owner.Allocate();          // being filled at the crash
    owner.SetTokenCount(partial, 2);
    p = SealedBlock(owner, root, 50, &hp);
    o = SealedBlock(owner, hp, 54);
    c = SealedBlock(owner, root, 60);
    owner.Release(b1);
    owner.Release(b0);
    // The owner "crashes" here: it is destroyed without clearing anything.
  }
  seg.meta[p].seal = 0;          // p was being evicted and rewritten: its child is orphaned
  seg.tokens[c * kBs + 1] ^= 1;  // c's tokens no longer give its hash (torn write)
  seg.meta[b2].ref_count = 1;    // stale reference counts are ignored
  const uint64_t roots[] = {root};
  BlockPool pool(seg.meta, seg.tokens, kBs, roots);
  const BlockRestoreReport& r = pool.restore_report();
  EXPECT_EQ(r.kept, 3);
  EXPECT_EQ(r.dropped_incomplete, 3);    // partial, p, c
  EXPECT_EQ(r.dropped_broken_chain, 1);  // o
  EXPECT_EQ(r.dropped_duplicate, 0);
  EXPECT_EQ(pool.FindSealed(h0, Tokens(0)), b0);
  EXPECT_EQ(pool.FindSealed(h1, Tokens(4)), b1);
  EXPECT_EQ(pool.FindSealed(h2, Tokens(8)), b2);
  EXPECT_EQ(pool.FindSealed(hp, Tokens(50)), -1);
  EXPECT_EQ(pool.num_cached(), 3);
  EXPECT_EQ(pool.num_used(), 0);
  EXPECT_EQ(pool.ref_count(b2), 0);
  for (int32_t dropped : {partial, p, o, c}) {
    EXPECT_EQ(seg.meta[dropped].seal, 0u);
    EXPECT_EQ(seg.meta[dropped].hash, 0u);
  }
  // Free blocks first (lowest id first), then the cached ones in their old LRU order: b2 was never
  // released, then b1 before b0.
  std::vector<int32_t> order;
  while (auto b = pool.Allocate()) order.push_back(*b);
  ASSERT_EQ(order.size(), 9u);
  EXPECT_EQ(std::vector<int32_t>(order.end() - 3, order.end()), (std::vector<int32_t>{b2, b1, b0}));
  EXPECT_EQ(pool.evictions(), 3u);
}

TEST(BlockPoolTest, RestoreUnderAnotherRootDropsEveryChain) {
  Segment seg(3);
  {
    BlockPool owner(seg.meta, seg.tokens, kBs);
    uint64_t h = 0;
    SealedBlock(owner, 5, 0, &h);
    SealedBlock(owner, h, 4);
  }
  const uint64_t roots[] = {6};
  BlockPool pool(seg.meta, seg.tokens, kBs, roots);
  EXPECT_EQ(pool.restore_report().kept, 0);
  EXPECT_EQ(pool.restore_report().dropped_broken_chain, 2);
  EXPECT_EQ(pool.num_cached(), 0);
}

TEST(BlockPoolTest, RestoreKeepsOneOfTwoBlocksWithTheSameHash) {
  Segment seg(3);
  uint64_t h = 0;
  int32_t b = 0;
  {
    BlockPool owner(seg.meta, seg.tokens, kBs);
    b = SealedBlock(owner, 5, 0, &h);
  }
  seg.meta[2] = seg.meta[b];
  std::copy_n(seg.tokens.begin() + b * kBs, kBs, seg.tokens.begin() + 2 * kBs);
  const uint64_t roots[] = {5};
  BlockPool pool(seg.meta, seg.tokens, kBs, roots);
  EXPECT_EQ(pool.restore_report().kept, 1);
  EXPECT_EQ(pool.restore_report().dropped_duplicate, 1);
  EXPECT_GE(pool.FindSealed(h, Tokens(0)), 0);
}

TEST(BlockPoolTest, AFreshPoolOverSegmentMetadataClearsWhateverWasThere) {
  Segment seg(2);
  {
    BlockPool owner(seg.meta, seg.tokens, kBs);
    SealedBlock(owner, 5, 0);
  }
  BlockPool pool(seg.meta, seg.tokens, kBs);
  EXPECT_EQ(pool.num_cached(), 0);
  EXPECT_EQ(pool.num_free(), 2);
  EXPECT_EQ(seg.meta[0].seal, 0u);
}

TEST(BlockPoolDeathTest, DoubleReleaseIsAnInvariantViolation) {
  BlockPool pool(1);
  int32_t id = *pool.Allocate();
  pool.Release(id);
  EXPECT_DEATH(pool.Release(id), "double release");
}

}  // namespace
}  // namespace smallmind::worker
