// DraftPicker: how a draft model picks one sequence's next draft: as the sequence's own
// TokenPicker picks its next token, so that wherever the draft's logits equal the target's the
// draft is the very token the target's picker will pick (the exact-pick rule accepts it). The
// same sampling parameters (logit bias, penalties over the tokens so far and the drafts before,
// temperature, top-k, top-p, min-p) and the same seeded draw: at the position the target picks
// its g-th generated token, UniformDouble(seed, g) (worker/sample/rng.h). Greedy stays argmax.
// Not replicated: the JSON output constraint (its state is the output parsed so far, and masking
// the vocabulary for each draft costs about a draft step), so a constrained request drafts
// unconstrained: greedy drafts agree wherever the model keeps to the format by itself, sampled
// ones seldom (the masked draw lands elsewhere), and the DraftController turns those off.
// One per sequence, in its DraftCache; scheduler thread only, not thread-safe.
#pragma once

#include <span>

#include "worker/sample/sampler.h"

namespace smallmind::worker {

class DraftPicker {
 public:
  // Allocates its sampler's scratch (at admission); Restart and Next allocate nothing.
  DraftPicker(const SamplingParams& params, int vocab_size);

  // The next Next() picks for the position `target` picks next: its history (penalties) and
  // draw index are copied.
  void Restart(const Sampler& target);
  // Picks the draft from `logits` [vocab] (bias and penalties applied in place) and records it
  // for the penalties and the draw index of the draft after it.
  TokenId Next(std::span<float> logits);

 private:
  Sampler sampler_;
};

}  // namespace smallmind::worker
