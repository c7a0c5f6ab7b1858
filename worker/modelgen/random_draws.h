// The random values smallmind-modelgen fills tensors with: draw i of SplitMix64 under a seed,
// so each value depends only on (seed, i), whatever order the tensors are written in, and the
// shapes the generators turn those bits into. Pure functions; the model generators (llama-family
// and BERT) share them so a generated file's bytes depend on nothing else.
#pragma once

#include <cstdint>

#include "shared/hash64.h"

namespace smallmind::worker {

inline constexpr uint64_t kSplitMixGamma = 0x9e3779b97f4a7c15ULL;

// Draw i (from 0) of SplitMix64 seeded with `seed`.
constexpr uint64_t DrawBits(uint64_t seed, uint64_t i) {
  return shared::Mix64(seed + (i + 1) * kSplitMixGamma);
}

// Uniform in [-1, 1), exactly representable (24 random bits).
constexpr float UniformSigned(uint64_t bits) {
  return static_cast<float>(bits >> 40) * 0x1p-23f - 1.0f;
}

// Irwin-Hall: four 16-bit uniforms in (0, 1) sum to mean 2, variance 1/3; rescaled to unit
// variance it is within a few percent of a normal's shape, bounded at +-2 sqrt(3).
constexpr float NearNormal(uint64_t bits) {
  float sum = 0.0f;
  for (int k = 0; k < 4; k++) {
    sum += (static_cast<float>((bits >> (16 * k)) & 0xffffu) + 0.5f) * 0x1p-16f;
  }
  return (sum - 2.0f) * 1.7320508f;
}

}  // namespace smallmind::worker
