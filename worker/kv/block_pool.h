// BlockPool: which KV blocks are free and how many sequences share each one (ids only; the tensor
// data lives in KvPool). Owned by the scheduler thread; not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace smallmind::worker {

class BlockPool {
 public:
  explicit BlockPool(int num_blocks);

  // A free block with reference count 1, or nullopt when the pool is exhausted (the scheduler
  // then preempts; never a crash).
  std::optional<int32_t> Allocate();
  // Allocates `n` blocks into `out` all-or-nothing: on failure nothing is taken.
  bool AllocateN(int n, std::vector<int32_t>* out);
  // Another sequence shares `block` (prefix sharing).
  void AddRef(int32_t block);
  // Drops one reference; the block is free again at zero.
  void Release(int32_t block);

  int num_total() const { return static_cast<int>(ref_counts_.size()); }
  int num_free() const { return static_cast<int>(free_.size()); }
  int num_used() const { return num_total() - num_free(); }
  int ref_count(int32_t block) const { return ref_counts_[block]; }

 private:
  std::vector<int32_t> free_;        // stack of free ids; lowest ids handed out first
  std::vector<int32_t> ref_counts_;  // [num_blocks]
};

}  // namespace smallmind::worker
