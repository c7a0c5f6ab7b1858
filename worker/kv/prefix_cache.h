// PrefixCache: reuse of full KV blocks between sequences that share a token prefix (DESIGN §4). A
// full block is named by a hash chain over (root, parent hash, its token ids); the scheduler asks
// how many leading blocks of a sequence are cached (Find: mutates nothing), takes them when it
// admits the sequence (Acquire: reference counts up, no recompute), and after every step reports
// the positions computed (OnComputed), which names and seals the blocks that just became full.
// The last token of a sequence is never served from the cache: its logits are needed. Owned by
// the scheduler thread; not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/exec_mode.h"
#include "worker/kv/block_pool.h"
#include "worker/types/token_id.h"

namespace smallmind::worker {

struct PrefixCacheOptions {
  bool enabled = true;
  // Chain roots per path (KvChainRoot). Equal when both paths write bitwise equal K/V, so either
  // path reuses the other's blocks; different roots keep deterministic requests on blocks written
  // by deterministic steps only.
  uint64_t deterministic_root = 1;
  uint64_t parallel_root = 1;
};

struct PrefixCacheCounters {
  uint64_t lookups = 0;     // sequences admitted with the cache on
  uint64_t hits = 0;        // of those, the ones that reused at least one block
  uint64_t hit_blocks = 0;  // blocks reused
  uint64_t hit_tokens = 0;  // prompt positions not recomputed
};

class PrefixCache {
 public:
  PrefixCache(BlockPool* pool, const PrefixCacheOptions& options);

  struct Match {
    int blocks = 0;     // leading full blocks of the sequence that are cached
    int evictable = 0;  // how many of them no sequence references now (taking them uses room)
  };
  // The cached leading blocks of `tokens` for a request on `mode`, at most (size - 1) / block_size
  // so the last token is always computed.
  Match Find(std::span<const TokenId> tokens, kernels::ExecMode mode) const;
  // Takes the first `n_blocks` blocks Find reported: appends them to the empty `block_table`, one
  // reference each, and counts the lookup. Returns the positions they cover.
  int Acquire(std::span<const TokenId> tokens, kernels::ExecMode mode, int n_blocks,
              std::vector<int32_t>* block_table);
  // After a step: positions [0, num_computed) of `tokens` hold K/V in `block_table`. Names and
  // seals the blocks that became full and records the fill of the last one.
  void OnComputed(std::span<const TokenId> tokens, int num_computed, kernels::ExecMode mode,
                  std::span<const int32_t> block_table);
  // Drops a sequence's references, its last block first, so that among blocks it leaves cached
  // the deepest are evicted before their parents; clears the table.
  void Release(std::vector<int32_t>* block_table);
  // Sliding window of `window` positions on every layer, after OnComputed(num_computed): drops
  // the references of the leading blocks no later query can see (every position before
  // num_computed - window + 1), replacing their entries by kNoBlock, except the block before the
  // first full block still unnamed-to-be (a later OnComputed chains from its hash). `released`:
  // leading entries already kNoBlock, updated. Released blocks stay cached for prefix reuse.
  void ReleaseBehindWindow(int window, int num_computed, std::vector<int32_t>* block_table,
                           int* released);

  bool enabled() const { return options_.enabled; }
  uint64_t root(kernels::ExecMode mode) const;
  const PrefixCacheCounters& counters() const { return counters_; }

 private:
  BlockPool* pool_;
  const PrefixCacheOptions options_;
  const int block_size_;
  PrefixCacheCounters counters_;
};

}  // namespace smallmind::worker
