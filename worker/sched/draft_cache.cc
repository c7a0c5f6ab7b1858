#include "worker/sched/draft_cache.h"

namespace smallmind::worker {

void DraftCache::Clear() {
  ReleasePast(0);
  computed = 0;
  drafts.clear();
  fed = 0;
}

void DraftCache::ReleasePast(int keep) {
  while (static_cast<int>(blocks.size()) > keep) {
    pool->Release(blocks.back());
    blocks.pop_back();
  }
  if (computed > keep * (pool != nullptr ? pool->block_size() : 0)) {
    computed = keep * (pool != nullptr ? pool->block_size() : 0);
  }
}

}  // namespace smallmind::worker
