// The builtin:tiny model: a small llama-shaped model with deterministic pseudo-random weights made
// in process, so the service starts with no download. Called once at worker start; stateless,
// thread-safe. Its 259-entry vocabulary is the byte-level one the tokenizer builds for it.
#pragma once

#include "worker/model/weights.h"

namespace smallmind::worker {

// dim 64, hidden 172, 2 layers, 4 query heads, 2 KV heads, vocab 259, context 512, F32, interleaved
// RoPE. The same bytes on every call and every machine (fixed seed, integer PRNG).
ModelConfig BuiltinTinyConfig();
LlamaModel MakeBuiltinTinyModel();

}  // namespace smallmind::worker
