// LongRopeFactors: made-up but Phi-3-shaped LongRoPE tensors for generated phi3 models: per-pair
// frequency divisors for long contexts (rope_factors_long.weight) and short ones
// (rope_factors_short.weight), and the attention factor Phi-3's converter writes with them
// (rope.scaling.attn_factor). Used by the model generator; stateless, thread-safe.
#pragma once

#include <vector>

namespace smallmind::worker {

struct LongRopeFactors {
  std::vector<float> long_factors;   // [rope_dims / 2]
  std::vector<float> short_factors;  // [rope_dims / 2]
  float attn_factor = 1.0f;
};

// For pair i of n = rope_dims / 2 (u = i / (n - 1)): long divisors rise geometrically from 1 for
// the fastest pair to scale = context / original_context for the slowest (u^1 exponent), as
// Phi-3's do from ~1 to ~scale; short ones stay near 1 (1 + u^2 / 4). attn_factor is the
// converter's sqrt(1 + ln(scale) / ln(original_context)) when scale > 1, else 1.
LongRopeFactors MakeLongRopeFactors(int rope_dims, int context, int original_context);

}  // namespace smallmind::worker
