#include "worker/kv/prefix_cache.h"

#include <algorithm>

#include "shared/check.h"
#include "worker/kv/block_hash.h"

namespace smallmind::worker {

PrefixCache::PrefixCache(BlockPool* pool, const PrefixCacheOptions& options)
    : pool_(pool), options_(options), block_size_(pool->block_size()) {}

uint64_t PrefixCache::root(kernels::ExecMode mode) const {
  return mode == kernels::ExecMode::kDeterministic ? options_.deterministic_root
                                                   : options_.parallel_root;
}

PrefixCache::Match PrefixCache::Find(std::span<const TokenId> tokens,
                                     kernels::ExecMode mode) const {
  Match match;
  if (!options_.enabled || tokens.empty()) return match;
  const int max_blocks = static_cast<int>(tokens.size() - 1) / block_size_;
  uint64_t parent = root(mode);
  for (int i = 0; i < max_blocks; ++i) {
    const std::span<const TokenId> block_tokens =
        tokens.subspan(size_t(i) * block_size_, block_size_);
    const uint64_t h = KvBlockHash(parent, block_tokens);
    const int32_t block = pool_->FindSealed(h, block_tokens);
    if (block < 0) break;
    ++match.blocks;
    if (pool_->ref_count(block) == 0) ++match.evictable;
    parent = h;
  }
  return match;
}

int PrefixCache::Acquire(std::span<const TokenId> tokens, kernels::ExecMode mode, int n_blocks,
                         std::vector<int32_t>* block_table) {
  SM_CHECK(block_table->empty()) << "acquiring a prefix into a sequence that has blocks";
  if (!options_.enabled) return 0;
  uint64_t parent = root(mode);
  for (int i = 0; i < n_blocks; ++i) {
    const std::span<const TokenId> block_tokens =
        tokens.subspan(size_t(i) * block_size_, block_size_);
    const uint64_t h = KvBlockHash(parent, block_tokens);
    const int32_t block = pool_->FindSealed(h, block_tokens);
    SM_CHECK(block >= 0) << "prefix block " << i << " vanished between Find and Acquire";
    pool_->AddRef(block);
    block_table->push_back(block);
    parent = h;
  }
  ++counters_.lookups;
  if (n_blocks > 0) ++counters_.hits;
  counters_.hit_blocks += static_cast<uint64_t>(n_blocks);
  counters_.hit_tokens += static_cast<uint64_t>(n_blocks) * block_size_;
  return n_blocks * block_size_;
}

void PrefixCache::OnComputed(std::span<const TokenId> tokens, int num_computed,
                             kernels::ExecMode mode, std::span<const int32_t> block_table) {
  const int full = num_computed / block_size_;
  SM_CHECK(static_cast<int>(block_table.size()) * block_size_ >= num_computed);
  if (num_computed % block_size_ != 0) {
    pool_->SetTokenCount(block_table[full], num_computed % block_size_);
  }
  if (full == 0) return;
  // Blocks already named (reused from the cache or named by an earlier step) form a prefix of the
  // table: walk back from the last full block to the first unnamed one.
  int first = full;
  while (first > 0 && block_table[first - 1] != kNoBlock &&
         pool_->hash(block_table[first - 1]) == 0) {
    --first;
  }
  SM_CHECK(first == 0 || block_table[first - 1] != kNoBlock) << "chain parent was released";
  uint64_t parent = first == 0 ? root(mode) : pool_->hash(block_table[first - 1]);
  for (int i = first; i < full; ++i) {
    const std::span<const TokenId> block_tokens =
        tokens.subspan(size_t(i) * block_size_, block_size_);
    const uint64_t h = KvBlockHash(parent, block_tokens);
    if (options_.enabled) {
      pool_->Seal(block_table[i], parent, h, block_tokens);
    } else {
      pool_->Name(block_table[i], parent, h, block_tokens);
    }
    parent = h;
  }
}

void PrefixCache::Release(std::vector<int32_t>* block_table) {
  for (auto it = block_table->rbegin(); it != block_table->rend(); ++it) {
    if (*it != kNoBlock) pool_->Release(*it);
  }
  block_table->clear();
}

void PrefixCache::ReleaseBehindWindow(int window, int num_computed,
                                      std::vector<int32_t>* block_table, int* released) {
  if (window <= 0) return;
  // The query at num_computed sees from num_computed - window + 1; block i is wholly before that
  // when (i + 1) * block_size <= it. Block i + 1 must be full (named): OnComputed reads the hash
  // of the last named block to name the next one.
  const int unseen = std::max(0, num_computed - window + 1) / block_size_;
  const int end = std::min(unseen, num_computed / block_size_ - 1);
  for (int i = *released; i < end; ++i) {
    int32_t& block = (*block_table)[static_cast<size_t>(i)];
    SM_CHECK(block != kNoBlock && pool_->hash(block) != 0) << "releasing an unnamed block " << i;
    pool_->Release(block);
    block = kNoBlock;
  }
  *released = std::max(*released, end);
}

}  // namespace smallmind::worker
