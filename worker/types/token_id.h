// TokenId: a position in a model's vocabulary, the one type every worker layer (tokenizer,
// sampler, scheduler, engine) passes tokens as. Plain data.
#pragma once

#include <cstdint>

namespace smallmind::worker {

using TokenId = int32_t;

}  // namespace smallmind::worker
