// Llama3RopeFactors: the rope_freqs.weight of a Llama 3.1 / 3.2 file: for each RoPE pair of a head,
// the divisor of its frequency under Meta's "llama3" rope scaling (the Hugging Face config's
// rope_scaling {factor, low_freq_factor, high_freq_factor, original_max_position_embeddings}),
// as llama.cpp's converter stores it. Used by the model generator; stateless, thread-safe.
#pragma once

#include <vector>

namespace smallmind::worker {

// Llama 3.1's and 3.2's published values.
struct Llama3RopeScaling {
  float factor = 32.0f;
  float low_freq_factor = 1.0f;
  float high_freq_factor = 4.0f;
  float original_context = 8192.0f;
};

// [head_dim / 2] divisors: pair i (frequency f = theta^(-2i / head_dim), wavelength 2 pi / f)
// keeps f (divisor 1) when its wavelength is under original_context / high_freq_factor, is
// divided by `factor` when it is over original_context / low_freq_factor, and in between is
// divided by 1 / ((1 - s) / factor + s), s = (original_context / wavelength - low) / (high - low).
std::vector<float> Llama3RopeFactors(int head_dim, float theta, const Llama3RopeScaling& s = {});

}  // namespace smallmind::worker
