#include "worker/sched/cached_prefixes.h"

#include <algorithm>

namespace smallmind::worker {

void CachedPrefixes::Record(const shared::PromptPrefixKeys& keys, std::span<const TokenId> tokens,
                            int prompt_tokens, std::span<const int32_t> block_table,
                            const BlockPool& pool) {
  if (keys.input_bytes == 0) return;
  const int block_size = pool.block_size();
  // Shortest cut first, so that the longest ends up most recent (the most specific key first).
  for (int i = 0; i < keys.count; ++i) {
    const shared::PromptPrefixKey& k = keys.keys[i];
    // Tokens are spread over the input's bytes about evenly: the cut holds about this many.
    const int64_t n_tokens =
        int64_t{prompt_tokens} * k.bytes / static_cast<int64_t>(keys.input_bytes);
    const int64_t block_index = n_tokens / block_size - 1;
    if (block_index < 0 || block_index >= static_cast<int64_t>(block_table.size())) continue;
    int32_t block = block_table[static_cast<size_t>(block_index)];
    if (block == kNoBlock) continue;  // released behind a sliding window
    if (!pool.sealed(block) && pool.hash(block) != 0) {
      // Computed beside another sequence with the same prefix, which sealed its copy first.
      block = pool.FindSealed(pool.hash(block),
                              tokens.subspan(static_cast<size_t>(block_index) * block_size,
                                             static_cast<size_t>(block_size)));
    }
    if (block < 0 || !pool.sealed(block)) continue;  // not cached (the cache may be off)
    Put(Entry{k.key, block, pool.hash(block)});
  }
}

void CachedPrefixes::Put(const Entry& entry) {
  auto same = std::find_if(entries_.begin(), entries_.end(),
                           [&](const Entry& e) { return e.key == entry.key; });
  if (same == entries_.end()) {
    if (static_cast<int>(entries_.size()) == kCapacity) entries_.pop_back();
    same = entries_.insert(entries_.begin(), entry);
  }
  // Move it to the front (the elements before it shift back by one).
  std::rotate(entries_.begin(), same, same + 1);
  entries_.front() = entry;
}

int CachedPrefixes::Live(const BlockPool& pool, std::span<uint64_t> out) const {
  size_t n = 0;
  for (const Entry& e : entries_) {
    if (n == out.size()) break;
    if (pool.sealed(e.block) && pool.hash(e.block) == e.block_hash) out[n++] = e.key;
  }
  return static_cast<int>(n);
}

}  // namespace smallmind::worker
