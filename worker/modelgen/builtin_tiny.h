// The builtin:tiny model: the model generator's "tiny" preset (deterministic pseudo-random
// weights), generated as a GGUF into memory and loaded through the GGUF loader's parsing, so the
// service starts with no download. Called once at worker start; stateless, thread-safe.
#pragma once

#include <string>

#include "worker/model/gguf/gguf_loader.h"
#include "worker/model/weights.h"
#include "worker/modelgen/model_generator.h"

namespace smallmind::worker {

// dim 64, hidden 172, 2 layers, 4 query heads, 2 KV heads, vocab 259, context 512, F32, interleaved
// RoPE, tied classifier. The same bytes on every call and every machine (fixed seed, integer PRNG).
ModelConfig BuiltinTinyConfig();
LlamaModel MakeBuiltinTinyModel();
// The model with the tokenizer from its GGUF metadata: the 259-token byte-level vocabulary
// (<unk>, <s>, </s>, <0x00>..<0xFF>), BOS added, no dummy prefix, so it encodes text exactly as
// MakeByteLevelTokenizer() does. file_size is 0.
GgufModel MakeBuiltinTiny();
// Any generated model, built the same way (in memory, parsed by the GGUF loader; `name` names the
// buffer in errors). Aborts on options ValidateGeneratorOptions refuses. For tests and builtins.
GgufModel MakeGeneratedModel(const GeneratorOptions& options, const std::string& name);

}  // namespace smallmind::worker
