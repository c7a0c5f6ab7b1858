#include "gateway/workers/prefix_memory.h"

#include <algorithm>

#include "shared/check.h"

namespace smallmind::gateway {

PrefixMemory::PrefixMemory(size_t keys_per_worker, std::chrono::milliseconds ttl)
    : capacity_(keys_per_worker), ttl_(ttl) {
  SM_CHECK(capacity_ > 0) << "a prefix memory needs room for a key";
}

void PrefixMemory::Remember(uint32_t worker, const shared::PromptPrefixKeys& keys,
                            Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  Lru& lru = workers_[worker];
  for (int i = 0; i < keys.count; ++i) {
    const uint64_t key = keys.keys[i].key;
    if (auto it = lru.index.find(key); it != lru.index.end()) lru.order.erase(it->second);
    lru.order.emplace_front(key, now);
    lru.index[key] = lru.order.begin();
    if (lru.order.size() > capacity_) {
      lru.index.erase(lru.order.back().first);
      lru.order.pop_back();
    }
  }
}

uint32_t PrefixMemory::MatchBytes(uint32_t worker, const shared::PromptPrefixKeys& keys,
                                  std::span<const uint64_t> reported, Clock::time_point now) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto found = workers_.find(worker);
  const Lru* lru = found == workers_.end() ? nullptr : &found->second;
  // Longest cut first.
  for (int i = keys.count - 1; i >= 0; --i) {
    const uint64_t key = keys.keys[i].key;
    bool sent = false;
    if (lru) {
      auto it = lru->index.find(key);
      sent = it != lru->index.end() && now - it->second->second <= ttl_;
    }
    if (sent || std::find(reported.begin(), reported.end(), key) != reported.end()) {
      return keys.keys[i].bytes;
    }
  }
  return 0;
}

void PrefixMemory::Forget(uint32_t worker) {
  std::lock_guard<std::mutex> lock(mu_);
  workers_.erase(worker);
}

size_t PrefixMemory::size(uint32_t worker) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto found = workers_.find(worker);
  return found == workers_.end() ? 0 : found->second.order.size();
}

}  // namespace smallmind::gateway
