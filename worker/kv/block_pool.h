// BlockPool: the KV block allocator and the prefix cache's index (ids and metadata only; the K/V
// data lives in KvPool). A block is in use (referenced by sequences), cached (sealed: a complete
// full block named by its hash, unreferenced, evicted least recently used first when the pool needs
// room; never while referenced) or free. The metadata (KvBlockMeta and each block's token ids)
// lives in a KV segment in shared memory, so a successor can re-adopt sealed blocks after a crash,
// or in the pool's own heap arrays. Owned by the scheduler thread; not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "shared/kv_segment_layout.h"
#include "worker/kv/block_hash_table.h"
#include "worker/types/token_id.h"

namespace smallmind::worker {

// A block table entry whose block was released because no layer can see its positions any more
// (every layer windowed: PrefixCache::ReleaseBehindWindow); nothing reads it.
inline constexpr int32_t kNoBlock = -1;

// What re-adopting a crashed owner's metadata kept and dropped.
struct BlockRestoreReport {
  int kept = 0;                  // sealed blocks with an intact chain, now cached
  int dropped_incomplete = 0;    // had metadata but no valid seal (mid-step at the crash)
  int dropped_broken_chain = 0;  // sealed, but a parent is missing or incomplete
  int dropped_duplicate = 0;     // sealed, but another kept block has the same hash
};

class BlockPool {
 public:
  // `num_blocks` blocks of `block_size` positions, metadata on the heap, every block free.
  explicit BlockPool(int num_blocks, int block_size = 16);
  // Over metadata kept elsewhere (a KV segment): `meta` [num_blocks] and `tokens` [num_blocks *
  // block_size]. Every block starts free, unless `restore_roots` is given: then every sealed block
  // whose hash chain leads back to one of those roots stays cached (warm restart) and the rest is
  // cleared (restore_report() says how many of each).
  BlockPool(std::span<shared::KvBlockMeta> meta, std::span<int32_t> tokens, int block_size,
            std::span<const uint64_t> restore_roots = {});

  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  // A block with reference count 1 and no tokens: a free one, else the least recently used cached
  // one (evicted). nullopt when every block is in use (the scheduler then preempts).
  std::optional<int32_t> Allocate();
  // Allocates `n` blocks into `out` all-or-nothing: on failure nothing is taken.
  bool AllocateN(int n, std::vector<int32_t>* out);
  // Another sequence uses `block` (in use, or cached: then it stops being evictable).
  void AddRef(int32_t block);
  // Drops one reference. At zero a sealed block becomes cached (most recently used); any other
  // block becomes free.
  void Release(int32_t block);

  // The cached or in-use sealed block named `hash` whose tokens are `tokens`, or -1.
  int32_t FindSealed(uint64_t hash, std::span<const TokenId> tokens) const;
  // Records that in-use `block` is full and complete: its tokens, parent hash and hash.
  void Name(int32_t block, uint64_t parent_hash, uint64_t hash, std::span<const TokenId> tokens);
  // Names `block` and also seals and indexes it, unless another block already has `hash` (then it
  // is only named: returns false).
  bool Seal(int32_t block, uint64_t parent_hash, uint64_t hash, std::span<const TokenId> tokens);
  // Positions of in-use `block` that hold K/V (for utilisation; Seal sets a full count).
  void SetTokenCount(int32_t block, int token_count);

  uint64_t hash(int32_t block) const { return meta_[block].hash; }  // 0: not full yet
  bool sealed(int32_t block) const { return meta_[block].seal != 0; }
  int ref_count(int32_t block) const { return static_cast<int>(meta_[block].ref_count); }
  int block_size() const { return block_size_; }

  int num_total() const { return static_cast<int>(meta_.size()); }
  // Blocks Allocate can hand out: free plus cached.
  int num_free() const { return static_cast<int>(free_.size()) + num_cached_; }
  int num_cached() const { return num_cached_; }             // sealed and unreferenced (evictable)
  int num_used() const { return num_total() - num_free(); }  // referenced by some sequence
  // Positions holding K/V in used blocks, each block counted once however many share it.
  int64_t tokens_in_used_blocks() const { return used_tokens_; }
  uint64_t evictions() const { return evictions_; }
  const BlockRestoreReport& restore_report() const { return restore_report_; }

 private:
  void InitLists();
  void Restore(std::span<const uint64_t> roots);
  void ClearMeta(int32_t block);
  void Evict(int32_t block);
  void PushCached(int32_t block);  // at the most recently used end
  void UnlinkCached(int32_t block);

  const int block_size_;
  std::vector<shared::KvBlockMeta> own_meta_;  // heap metadata when none was given
  std::vector<int32_t> own_tokens_;
  std::span<shared::KvBlockMeta> meta_;  // [num_blocks]
  std::span<int32_t> tokens_;            // [num_blocks][block_size]
  std::vector<int32_t> free_;            // stack of free ids; lowest ids handed out first
  std::vector<int32_t> prev_;            // [num_blocks] cached list links (-1: none)
  std::vector<int32_t> next_;            // [num_blocks]
  int32_t lru_head_ = -1;                // least recently used cached block: evicted first
  int32_t lru_tail_ = -1;
  int num_cached_ = 0;
  BlockHashTable table_;  // hash -> sealed block
  uint64_t tick_ = 0;     // release clock for KvBlockMeta::last_use
  int64_t used_tokens_ = 0;
  uint64_t evictions_ = 0;
  BlockRestoreReport restore_report_;
};

}  // namespace smallmind::worker
