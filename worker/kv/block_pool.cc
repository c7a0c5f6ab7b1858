#include "worker/kv/block_pool.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "shared/check.h"
#include "worker/kv/block_hash.h"

namespace smallmind::worker {
namespace {

using shared::KvBlockMeta;

// The seal is the word a successor trusts: it is stored after everything it vouches for, and
// cleared before anything it vouches for changes (program order is what a crash preserves).
void StoreSeal(KvBlockMeta& m, uint64_t seal) {
  std::atomic_ref<uint64_t>(m.seal).store(seal, std::memory_order_release);
}

// Restore's chain check: a candidate block stays (2) when its parent is one of `roots` or a block
// that stays, else it goes (3); non-candidates stay 0. Each block is resolved once (state 0
// unknown, 1 on the current path, 2 stays, 3 goes), so this is O(n).
std::vector<char> ResolveChains(std::span<const shared::KvBlockMeta> meta,
                                const BlockHashTable& table, std::span<const uint64_t> roots,
                                const std::vector<char>& candidate) {
  const int n = static_cast<int>(meta.size());
  std::vector<char> state(n, 0);
  std::vector<int32_t> path;
  for (int32_t b = 0; b < n; ++b) {
    if (!candidate[b] || state[b] != 0) continue;
    path.clear();
    int32_t cur = b;
    char verdict = 3;
    while (true) {
      state[cur] = 1;
      path.push_back(cur);
      const uint64_t parent = meta[cur].parent_hash;
      if (std::find(roots.begin(), roots.end(), parent) != roots.end()) {
        verdict = 2;
        break;
      }
      const int32_t p = table.Find(parent);
      if (p < 0 || state[p] == 1 || state[p] == 3) break;  // missing, a cycle, or going
      if (state[p] == 2) {
        verdict = 2;
        break;
      }
      cur = p;
    }
    for (int32_t q : path) state[q] = verdict;
  }
  return state;
}

}  // namespace

BlockPool::BlockPool(int num_blocks, int block_size)
    : block_size_(block_size),
      own_meta_(static_cast<size_t>(std::max(num_blocks, 0))),
      own_tokens_(static_cast<size_t>(std::max(num_blocks, 0)) * std::max(block_size, 0)),
      meta_(own_meta_),
      tokens_(own_tokens_),
      table_(num_blocks) {
  SM_CHECK(num_blocks > 0) << "a KV pool needs at least one block";
  SM_CHECK(block_size > 0) << "a KV block needs at least one position";
  InitLists();
  for (int32_t id = num_blocks - 1; id >= 0; --id) free_.push_back(id);
}

BlockPool::BlockPool(std::span<KvBlockMeta> meta, std::span<int32_t> tokens, int block_size,
                     std::span<const uint64_t> restore_roots)
    : block_size_(block_size), meta_(meta), tokens_(tokens), table_(static_cast<int>(meta.size())) {
  SM_CHECK(!meta.empty()) << "a KV pool needs at least one block";
  SM_CHECK(block_size > 0) << "a KV block needs at least one position";
  SM_CHECK(tokens.size() == meta.size() * block_size) << "token array does not match the blocks";
  InitLists();
  if (restore_roots.empty()) {
    for (int32_t id = num_total() - 1; id >= 0; --id) {
      ClearMeta(id);
      free_.push_back(id);
    }
  } else {
    Restore(restore_roots);
  }
}

void BlockPool::InitLists() {
  free_.reserve(meta_.size());
  prev_.assign(meta_.size(), -1);
  next_.assign(meta_.size(), -1);
}

void BlockPool::ClearMeta(int32_t block) {
  KvBlockMeta& m = meta_[block];
  StoreSeal(m, 0);
  m.hash = 0;
  m.parent_hash = 0;
  m.token_count = 0;
  m.ref_count = 0;
}

std::optional<int32_t> BlockPool::Allocate() {
  int32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else if (lru_head_ >= 0) {
    id = lru_head_;
    Evict(id);
  } else {
    return std::nullopt;
  }
  SM_DCHECK(meta_[id].ref_count == 0 && meta_[id].seal == 0);
  meta_[id].ref_count = 1;
  return id;
}

void BlockPool::Evict(int32_t block) {
  UnlinkCached(block);
  table_.Erase(meta_[block].hash);
  ClearMeta(block);  // unsealed before the engine writes anything new into it
  ++evictions_;
}

bool BlockPool::AllocateN(int n, std::vector<int32_t>* out) {
  if (n > num_free()) return false;
  for (int i = 0; i < n; ++i) out->push_back(*Allocate());
  return true;
}

void BlockPool::AddRef(int32_t block) {
  SM_CHECK(block >= 0 && block < num_total()) << "bad block id " << block;
  KvBlockMeta& m = meta_[block];
  if (m.ref_count == 0) {
    SM_CHECK(m.seal != 0) << "AddRef on free block " << block;
    UnlinkCached(block);
    used_tokens_ += m.token_count;
  }
  ++m.ref_count;
}

void BlockPool::Release(int32_t block) {
  SM_CHECK(block >= 0 && block < num_total()) << "bad block id " << block;
  KvBlockMeta& m = meta_[block];
  SM_CHECK(m.ref_count > 0) << "double release of block " << block;
  if (--m.ref_count > 0) return;
  used_tokens_ -= m.token_count;
  if (m.seal != 0) {
    m.last_use = ++tick_;
    PushCached(block);
  } else {
    ClearMeta(block);
    free_.push_back(block);
  }
}

int32_t BlockPool::FindSealed(uint64_t hash, std::span<const TokenId> tokens) const {
  const int32_t block = table_.Find(hash);
  if (block < 0 || tokens.size() != static_cast<size_t>(block_size_)) return -1;
  const int32_t* stored = tokens_.data() + static_cast<size_t>(block) * block_size_;
  return std::equal(tokens.begin(), tokens.end(), stored) ? block : -1;
}

void BlockPool::Name(int32_t block, uint64_t parent_hash, uint64_t hash,
                     std::span<const TokenId> tokens) {
  KvBlockMeta& m = meta_[block];
  SM_CHECK(m.ref_count > 0 && m.seal == 0) << "naming block " << block << " that is not in use";
  SM_CHECK(tokens.size() == static_cast<size_t>(block_size_) && hash != 0);
  std::copy(tokens.begin(), tokens.end(),
            tokens_.begin() + static_cast<ptrdiff_t>(block) * block_size_);
  used_tokens_ += block_size_ - static_cast<int64_t>(m.token_count);
  m.token_count = static_cast<uint32_t>(block_size_);
  m.parent_hash = parent_hash;
  m.hash = hash;
}

bool BlockPool::Seal(int32_t block, uint64_t parent_hash, uint64_t hash,
                     std::span<const TokenId> tokens) {
  Name(block, parent_hash, hash, tokens);
  if (table_.Find(hash) >= 0) return false;  // an equal block is cached already: keep that one
  KvBlockMeta& m = meta_[block];
  table_.Insert(hash, block);
  StoreSeal(m, shared::KvBlockSeal(hash, parent_hash, m.token_count));
  return true;
}

void BlockPool::SetTokenCount(int32_t block, int token_count) {
  KvBlockMeta& m = meta_[block];
  SM_CHECK(m.ref_count > 0 && m.seal == 0) << "block " << block << " is not being filled";
  used_tokens_ += token_count - static_cast<int64_t>(m.token_count);
  m.token_count = static_cast<uint32_t>(token_count);
}

void BlockPool::PushCached(int32_t block) {
  prev_[block] = lru_tail_;
  next_[block] = -1;
  if (lru_tail_ >= 0) {
    next_[lru_tail_] = block;
  } else {
    lru_head_ = block;
  }
  lru_tail_ = block;
  ++num_cached_;
}

void BlockPool::UnlinkCached(int32_t block) {
  const int32_t p = prev_[block];
  const int32_t n = next_[block];
  (p >= 0 ? next_[p] : lru_head_) = n;
  (n >= 0 ? prev_[n] : lru_tail_) = p;
  prev_[block] = next_[block] = -1;
  --num_cached_;
}

void BlockPool::Restore(std::span<const uint64_t> roots) {
  const int n = num_total();
  // 1. Blocks whose seal vouches for their metadata and whose stored tokens give their hash.
  std::vector<char> candidate(n, 0);
  for (int32_t b = 0; b < n; ++b) {
    KvBlockMeta& m = meta_[b];
    m.ref_count = 0;  // nobody survived the crash
    const bool sealed =
        m.seal != 0 && m.seal == shared::KvBlockSeal(m.hash, m.parent_hash, m.token_count);
    const std::span<const int32_t> toks = tokens_.subspan(size_t(b) * block_size_, block_size_);
    if (sealed && m.token_count == uint32_t(block_size_) &&
        m.hash == KvBlockHash(m.parent_hash, toks)) {
      if (table_.Find(m.hash) >= 0) {
        ++restore_report_.dropped_duplicate;
      } else {
        table_.Insert(m.hash, b);
        candidate[b] = 1;
      }
    } else if (m.seal != 0 || m.hash != 0 || m.token_count != 0) {
      ++restore_report_.dropped_incomplete;
    }
  }
  // 2. Chains: a block stays when its parent is a root or a block that stays.
  const std::vector<char> state = ResolveChains(meta_, table_, roots, candidate);
  // 3. Kept blocks are cached in their old LRU order; everything else is cleared and free.
  std::vector<int32_t> kept;
  for (int32_t b = 0; b < n; ++b) {
    if (state[b] == 2) {
      kept.push_back(b);
      tick_ = std::max(tick_, meta_[b].last_use);
    } else if (candidate[b]) {
      table_.Erase(meta_[b].hash);
      ++restore_report_.dropped_broken_chain;
    }
  }
  std::stable_sort(kept.begin(), kept.end(),
                   [&](int32_t a, int32_t c) { return meta_[a].last_use < meta_[c].last_use; });
  for (int32_t b : kept) PushCached(b);
  restore_report_.kept = static_cast<int>(kept.size());
  for (int32_t b = n - 1; b >= 0; --b) {
    if (state[b] == 2) continue;
    ClearMeta(b);
    free_.push_back(b);
  }
}

}  // namespace smallmind::worker
