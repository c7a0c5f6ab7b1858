// DraftCache: one sequence's part of the draft model's paged KV cache (worker/engine/
// draft_model.h) and the drafts it last proposed. The draft model fills it before the scheduler
// plans a step; the scheduler reads the drafts (Scheduler::ProposeDraft). Its K/V follow the
// sequence's tokens: at the next proposal the positions past the last draft the target accepted
// are dropped (blocks released), as the target's cache drops rejected drafts. Releases its blocks
// when cleared or destroyed. Its DraftPicker draws the drafts with the sequence's sampling. Owned
// by a Sequence on the scheduler thread; not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "worker/kv/block_pool.h"
#include "worker/sample/draft_picker.h"
#include "worker/types/token_id.h"

namespace smallmind::worker {

class DraftCache {
 public:
  DraftCache() = default;
  ~DraftCache() { Clear(); }
  DraftCache(const DraftCache&) = delete;
  DraftCache& operator=(const DraftCache&) = delete;

  // Releases every block and forgets the drafts.
  void Clear();
  // Releases the blocks past the first `keep`.
  void ReleasePast(int keep);

  // The drafts proposed for the sequence when it held `num_tokens` tokens after `shifts` context
  // shifts; empty when they are not for that state.
  std::span<const TokenId> DraftsFor(int num_tokens, int shifts) const {
    if (num_tokens != base || shifts != this->shifts) return {};
    return drafts;
  }

  BlockPool* pool = nullptr;    // the draft model's pool, set at the first proposal
  std::vector<int32_t> blocks;  // draft KV block ids, position p in blocks[p / block_size]
  int computed = 0;  // positions whose draft K/V hold the sequence's tokens (then fed drafts)
  int base = 0;      // the sequence's tokens when the drafts were made
  int shifts = 0;    // its context shifts then (a shift rewrites the tokens: all K/V dropped)
  std::vector<TokenId> drafts;  // the last proposal; capacity max_draft, reserved at admission
  int fed = 0;  // of them, the first `fed` have K/V at positions base, base + 1, ...
  // Picks the drafts as the sequence's own picker would; built at admission (Scheduler::Add).
  std::optional<DraftPicker> picker;
};

}  // namespace smallmind::worker
