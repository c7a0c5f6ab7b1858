// CachedPrefixes: the prompt prefix keys (shared/prompt_prefix_key.h) of the most recent prompts
// whose KV blocks went into the prefix cache, each tied to the cached block that holds the last
// full block of that prefix, so that a key is reported only while its block still holds what it
// held (not evicted, not reused). Bounded; it feeds WorkerStats.cached_prefix_keys, the summary
// the gateway routes by. Owned by the scheduler thread; not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "shared/prompt_prefix_key.h"
#include "worker/kv/block_pool.h"

namespace smallmind::worker {

class CachedPrefixes {
 public:
  // Keys kept: 16 prompts' worth of all four cuts; a router needs the recent ones, not a history.
  static constexpr int kCapacity = 64;

  CachedPrefixes() { entries_.reserve(kCapacity); }

  // After the first `prompt_tokens` of `tokens` (a prompt) have been computed into `block_table`:
  // records each of its keys (most recent first), tied to the sealed block that holds the last
  // full block of about key.bytes / keys.input_bytes of the prompt's tokens (the sequence's own,
  // or the cached block with the same contents); a key whose prefix fills no whole cached block
  // is skipped (nothing of it is cached). A key already present moves to the front.
  void Record(const shared::PromptPrefixKeys& keys, std::span<const TokenId> tokens,
              int prompt_tokens, std::span<const int32_t> block_table, const BlockPool& pool);

  // The recorded keys whose blocks still hold what they held, most recent first, written to the
  // front of `out`; returns how many (at most out.size()).
  int Live(const BlockPool& pool, std::span<uint64_t> out) const;

 private:
  struct Entry {
    uint64_t key;
    int32_t block;
    uint64_t block_hash;  // the block's hash when recorded: still equal = still the same content
  };
  void Put(const Entry& entry);

  std::vector<Entry> entries_;  // [<= kCapacity] most recent first
};

}  // namespace smallmind::worker
