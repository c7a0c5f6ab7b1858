// SampleStep: the sampling stage of a step, between the engine's logits and the scheduler's
// update (schedule -> execute -> sample -> update): every sequence that finished its pending
// positions this step picks its next token with its own TokenPicker. Picks touch only their own
// picker and logits row, so they run on the engine's threads in parallel when the caller lends
// them; each draws from its own seeded RNG, so the tokens do not depend on that. Stateless;
// thread-safe.
#pragma once

#include <functional>
#include <span>

#include "worker/sample/token_picker.h"

namespace smallmind::worker {

// One sequence's pick this step: filled in by the scheduler (picker, row), answered by the
// sampling stage (pick).
struct SampleSlot {
  TokenPicker* picker = nullptr;
  int row = 0;  // the plan entry whose logits it reads
  Pick pick;
};

// Runs body(i) for every i in [0, n), possibly on several threads at once, and returns when all
// are done (EngineLoop lends the engine's pool).
using ForEachFn = std::function<void(int n, const std::function<void(int)>& body)>;

// slot.pick = slot.picker->Next(logits(slot.row)) for every slot. `logits` must be safe to call
// from several threads; `for_each` (null: one thread) runs the picks.
void SampleStep(std::span<SampleSlot> slots, const std::function<std::span<float>(int)>& logits,
                const ForEachFn& for_each = nullptr);

}  // namespace smallmind::worker
