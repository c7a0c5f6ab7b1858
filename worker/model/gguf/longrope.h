// LongRoPE (Phi-3 128k, Phi-3.5, Phi-4-mini): the per-pair frequency divisors of a phi3 file come
// in two tensors, rope_factors_long.weight and rope_factors_short.weight, and one attention factor.
// These functions pick the tensor the served context calls for and read the factor, as llama.cpp
// does. Called by gguf_loader.cc; stateless, thread-safe.
#pragma once

#include <string>

#include "shared/status.h"
#include "worker/model/gguf/gguf_reader.h"
#include "worker/types/model_config.h"

namespace smallmind::worker {

inline constexpr char kRopeFactorsLong[] = "rope_factors_long.weight";
inline constexpr char kRopeFactorsShort[] = "rope_factors_short.weight";

// Reads {arch}.rope.scaling.attn_factor (absent: 1) into c->rope_attn_factor; it must be finite
// and > 0. llama.cpp multiplies RoPE's cos and sin by it (its attn_factor with ext_factor 0, the
// case of every non-yarn file).
shared::Status ReadRopeAttnFactor(const GgufFile& f, const std::string& arch, ModelConfig* c);

// Whether the long factors apply: llama.cpp's get_rope_factors takes rope_factors_long when the
// context of a sequence exceeds {arch}.rope.scaling.original_context_length (absent: the training
// context), else rope_factors_short. smallmind serves every sequence the model's whole
// context_length, so that is the context compared. (llama.cpp compares its context size rounded up
// to 256, which a caller sets; the conformance cases choose sizes on the same side for both.)
shared::Result<bool> UsesLongRopeFactors(const GgufFile& f, const ModelConfig& c);

}  // namespace smallmind::worker
