#include "worker/sample/sample_step.h"

namespace smallmind::worker {

void SampleStep(std::span<SampleSlot> slots, const std::function<std::span<float>(int)>& logits,
                const ForEachFn& for_each) {
  // ~34 us a pick at a 32k vocabulary, so a step of 16 sequences samples on the engine's threads
  // in parallel.
  const auto pick = [&](int i) {
    SampleSlot& slot = slots[i];
    slot.pick = slot.picker->Next(logits(slot.row));
  };
  const int n = static_cast<int>(slots.size());
  if (for_each && n > 1) {
    for_each(n, pick);
  } else {
    for (int i = 0; i < n; ++i) pick(i);
  }
}

}  // namespace smallmind::worker
