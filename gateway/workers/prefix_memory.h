// What the gateway remembers of the prompts it routed, for prefix affinity (issue 10 item 3): per
// worker id, the prompt prefix keys (shared/prompt_prefix_key.h: hashes of a prompt's first 256,
// 1024, 4096 and 16384 bytes) of the requests sent there, bounded per worker with least recently
// used eviction and forgotten after a time to live (or when the worker leaves the pool). Beside the
// keys a worker reports in Stats (what its prefix cache holds now, polled), it covers the requests
// routed since the last poll. Owned by WorkerPool; thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <list>
#include <mutex>
#include <span>
#include <unordered_map>
#include <utility>

#include "shared/prompt_prefix_key.h"

namespace smallmind::gateway {

class PrefixMemory {
 public:
  using Clock = std::chrono::steady_clock;

  PrefixMemory(size_t keys_per_worker, std::chrono::milliseconds ttl);

  // Worker `worker` (its WorkerClient::index()) was just sent a prompt with `keys`.
  void Remember(uint32_t worker, const shared::PromptPrefixKeys& keys, Clock::time_point now);
  // The longest cut of `keys` that `worker` was sent within the time to live or lists in
  // `reported` (its Stats.cached_prefix_keys); 0 when none.
  uint32_t MatchBytes(uint32_t worker, const shared::PromptPrefixKeys& keys,
                      std::span<const uint64_t> reported, Clock::time_point now) const;
  // Drops what `worker` was sent (it left the pool; should it come back, its cache is cold).
  void Forget(uint32_t worker);
  size_t size(uint32_t worker) const;

 private:
  // Most recently used first.
  struct Lru {
    std::list<std::pair<uint64_t, Clock::time_point>> order;  // key, last sent
    std::unordered_map<uint64_t, std::list<std::pair<uint64_t, Clock::time_point>>::iterator> index;
  };

  const size_t capacity_;
  const std::chrono::milliseconds ttl_;
  mutable std::mutex mu_;
  std::unordered_map<uint32_t, Lru> workers_;  // guarded by mu_: worker id -> its keys
};

}  // namespace smallmind::gateway
