// CachedPrefixes: a prompt's prefix keys are reported while the cached block holding each prefix
// keeps its contents, and disappear once it is evicted; the most recent first, bounded.
#include "worker/sched/cached_prefixes.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "worker/kv/prefix_cache.h"

namespace smallmind::worker {
namespace {

constexpr int kBs = 64;  // a 256-byte prefix fills 4 blocks

// A byte-level prompt of `text`'s bytes (one token per byte, as builtin:tiny's vocabulary has).
std::vector<TokenId> Tokens(const std::string& text) {
  std::vector<TokenId> t;
  for (unsigned char c : text) t.push_back(3 + c);
  return t;
}

class CachedPrefixesTest : public ::testing::Test {
 protected:
  // Computes `tokens` into fresh blocks of the pool (sealed by the prefix cache) and returns the
  // block table, still referenced.
  std::vector<int32_t> Compute(const std::vector<TokenId>& tokens) {
    std::vector<int32_t> table;
    EXPECT_TRUE(pool_.AllocateN((static_cast<int>(tokens.size()) + kBs - 1) / kBs, &table));
    cache_.OnComputed(tokens, static_cast<int>(tokens.size()), kernels::ExecMode::kParallel, table);
    return table;
  }
  std::vector<uint64_t> Live() const {
    std::vector<uint64_t> out(CachedPrefixes::kCapacity);
    out.resize(prefixes_.Live(pool_, out));
    return out;
  }

  BlockPool pool_{400, kBs};
  PrefixCache cache_{&pool_, PrefixCacheOptions{}};
  CachedPrefixes prefixes_;
};

TEST_F(CachedPrefixesTest, ReportsTheKeysOfACachedPromptLongestFirst) {
  const std::string text(1100, 'x');
  const std::vector<TokenId> tokens = Tokens(text);
  const shared::PromptPrefixKeys keys = shared::TextPromptPrefixKeys(text);
  ASSERT_EQ(keys.count, 2);
  std::vector<int32_t> table = Compute(tokens);
  prefixes_.Record(keys, tokens, static_cast<int>(tokens.size()), table, pool_);
  EXPECT_EQ(Live(), (std::vector<uint64_t>{keys.keys[1].key, keys.keys[0].key}));
  cache_.Release(&table);  // unreferenced but cached: still there
  EXPECT_EQ(Live().size(), 2u);
}

TEST_F(CachedPrefixesTest, AKeyDisappearsWhenItsBlockIsEvicted) {
  const std::string text(300, 'y');
  const std::vector<TokenId> tokens = Tokens(text);
  std::vector<int32_t> table = Compute(tokens);
  prefixes_.Record(shared::TextPromptPrefixKeys(text), tokens, 300, table, pool_);
  ASSERT_EQ(Live().size(), 1u);
  cache_.Release(&table);
  // Take every block: the cached ones are evicted and reused for other contents.
  std::vector<int32_t> all;
  ASSERT_TRUE(pool_.AllocateN(pool_.num_free(), &all));
  EXPECT_TRUE(Live().empty());
}

TEST_F(CachedPrefixesTest, APrefixThatFillsNoWholeCachedBlockIsNotReported) {
  const std::string text(256, 'z');
  const std::vector<TokenId> tokens = Tokens(text);
  std::vector<int32_t> table;
  ASSERT_TRUE(pool_.AllocateN(4, &table));
  // Only the first 3 positions were computed: no block is full, none is sealed.
  cache_.OnComputed(tokens, 3, kernels::ExecMode::kParallel, table);
  prefixes_.Record(shared::TextPromptPrefixKeys(text), tokens, 256, table, pool_);
  EXPECT_TRUE(Live().empty());
}

TEST_F(CachedPrefixesTest, KeepsTheMostRecentKeysUpToItsCapacity) {
  std::vector<uint64_t> newest;
  for (int i = 0; i < CachedPrefixes::kCapacity + 5; ++i) {
    const std::string text = std::to_string(i) + std::string(260, 'p');
    const std::vector<TokenId> tokens = Tokens(text);
    std::vector<int32_t> table = Compute(tokens);
    const shared::PromptPrefixKeys keys = shared::TextPromptPrefixKeys(text);
    prefixes_.Record(keys, tokens, static_cast<int>(tokens.size()), table, pool_);
    newest.insert(newest.begin(), keys.keys[0].key);
    cache_.Release(&table);  // 5 blocks each: the pool holds all of them, nothing is evicted
  }
  newest.resize(CachedPrefixes::kCapacity);
  EXPECT_EQ(Live(), newest);
}

}  // namespace
}  // namespace smallmind::worker
