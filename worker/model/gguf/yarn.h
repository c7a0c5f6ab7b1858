// YaRN RoPE scaling (gpt-oss; llama.cpp's rope_yarn with ext_factor 1, beta_fast 32, beta_slow 1):
// the per-pair frequency divisors and the cos / sin multiplier a yarn file's ModelConfig implies
// (ModelConfig::rope_yarn says the formula). Called by gguf_loader.cc when it reads a yarn file and
// by modelgen to say what the loader reads back; stateless, thread-safe.
#pragma once

#include <vector>

#include "shared/status.h"
#include "worker/model/gguf/gguf_reader.h"
#include "worker/types/model_config.h"

namespace smallmind::worker {

inline constexpr float kYarnBetaFast = 32.0f;
inline constexpr float kYarnBetaSlow = 1.0f;

// [rotary_dims / 2] divisors of the pairs' frequencies for RoPE base `theta` (kernels::RopeFreqs::
// factors with scale 1): pair i turns at theta^(-2i/d) * (s (1 - r_i) + r_i), s =
// c.rope_freq_scale, r_i the ramp between llama.cpp's correction dims of
// c.rope_yarn_orig_context.
std::vector<float> YarnFactors(const ModelConfig& c, float theta);

// The multiplier of cos and sin: llama.cpp's yarn_attn_factor (get_mscale(factor) /
// (1 + 0.1 ln factor) * file_attn_factor) times the kernel's 1 + 0.1 ln(1 / freq_scale), in its
// float order.
float YarnMscale(float freq_scale, float file_attn_factor);

// For a family that allows yarn, with {arch}.rope.scaling.type "yarn" already seen and
// c->rope_freq_scale read: sets c->rope_yarn, c->rope_yarn_orig_context
// ({arch}.rope.scaling.original_context_length, absent: context_length, as llama.cpp) and folds
// YarnMscale into c->rope_attn_factor.
shared::Status ReadYarn(const GgufFile& f, const std::string& arch, ModelConfig* c);

}  // namespace smallmind::worker
