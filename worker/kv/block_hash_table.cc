#include "worker/kv/block_hash_table.h"

#include "shared/check.h"
#include "shared/hash64.h"

namespace smallmind::worker {

BlockHashTable::BlockHashTable(int max_entries) : max_entries_(max_entries) {
  SM_CHECK(max_entries >= 0) << "negative table size";
  size_t capacity = 16;
  while (capacity < 2 * static_cast<size_t>(max_entries)) capacity *= 2;
  slots_.resize(capacity);
  mask_ = capacity - 1;
}

size_t BlockHashTable::Home(uint64_t hash) const {
  // Block hashes are already well mixed; mixing again keeps a weak caller hash from clustering.
  return static_cast<size_t>(shared::Mix64(hash)) & mask_;
}

int32_t BlockHashTable::Find(uint64_t hash) const {
  SM_DCHECK(hash != 0);
  for (size_t i = Home(hash);; i = (i + 1) & mask_) {
    const Slot& s = slots_[i];
    if (s.hash == hash) return s.block;
    if (s.hash == 0) return -1;
  }
}

bool BlockHashTable::Insert(uint64_t hash, int32_t block) {
  SM_CHECK(hash != 0) << "hash 0 is reserved";
  if (size_ >= max_entries_) return false;
  size_t i = Home(hash);
  for (; slots_[i].hash != 0; i = (i + 1) & mask_) {
    SM_CHECK(slots_[i].hash != hash) << "hash inserted twice";
  }
  slots_[i] = {hash, block};
  ++size_;
  return true;
}

bool BlockHashTable::Erase(uint64_t hash) {
  size_t i = Home(hash);
  for (; slots_[i].hash != hash; i = (i + 1) & mask_) {
    if (slots_[i].hash == 0) return false;
  }
  // Backward shift: pull later entries of the probe run into the hole when their home allows it,
  // so lookups never need tombstones.
  size_t hole = i;
  for (size_t j = (hole + 1) & mask_; slots_[j].hash != 0; j = (j + 1) & mask_) {
    const size_t home = Home(slots_[j].hash);
    // j may move to `hole` when home is not cyclically in (hole, j].
    const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (stays) continue;
    slots_[hole] = slots_[j];
    hole = j;
  }
  slots_[hole] = Slot{};
  --size_;
  return true;
}

}  // namespace smallmind::worker
