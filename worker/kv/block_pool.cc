#include "worker/kv/block_pool.h"

#include "shared/check.h"

namespace smallmind::worker {

BlockPool::BlockPool(int num_blocks) : ref_counts_(num_blocks, 0) {
  SM_CHECK(num_blocks > 0) << "a KV pool needs at least one block";
  free_.reserve(num_blocks);
  for (int32_t id = num_blocks - 1; id >= 0; --id) free_.push_back(id);
}

std::optional<int32_t> BlockPool::Allocate() {
  if (free_.empty()) return std::nullopt;
  int32_t id = free_.back();
  free_.pop_back();
  SM_DCHECK(ref_counts_[id] == 0);
  ref_counts_[id] = 1;
  return id;
}

bool BlockPool::AllocateN(int n, std::vector<int32_t>* out) {
  if (n > num_free()) return false;
  for (int i = 0; i < n; ++i) out->push_back(*Allocate());
  return true;
}

void BlockPool::AddRef(int32_t block) {
  SM_CHECK(ref_counts_[block] > 0) << "AddRef on free block " << block;
  ++ref_counts_[block];
}

void BlockPool::Release(int32_t block) {
  SM_CHECK(block >= 0 && block < num_total()) << "bad block id " << block;
  SM_CHECK(ref_counts_[block] > 0) << "double release of block " << block;
  if (--ref_counts_[block] == 0) free_.push_back(block);
}

}  // namespace smallmind::worker
