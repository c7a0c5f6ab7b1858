// BlockHashTable: block hash -> block id for the prefix cache, a fixed-capacity open-addressing
// table (linear probing, backward-shift deletion), so inserting and erasing never allocate after
// construction. Owned by BlockPool on the scheduler thread; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace smallmind::worker {

class BlockHashTable {
 public:
  // Room for `max_entries` entries at a load factor of at most 1/2.
  explicit BlockHashTable(int max_entries);

  // The block stored under `hash` (never 0), or -1.
  int32_t Find(uint64_t hash) const;
  // Stores `block` under `hash`, which must be absent; false when the table is full (never, while
  // entries stay within max_entries).
  bool Insert(uint64_t hash, int32_t block);
  // Removes `hash`; false when it was absent.
  bool Erase(uint64_t hash);
  int size() const { return size_; }

 private:
  struct Slot {
    uint64_t hash = 0;  // 0: empty
    int32_t block = -1;
  };
  size_t Home(uint64_t hash) const;

  std::vector<Slot> slots_;  // [capacity], a power of two
  size_t mask_;
  int size_ = 0;
  int max_entries_;
};

}  // namespace smallmind::worker
