// Counter-based RNG: (seed, draw index) -> uniform number, a pure function with no state, so a
// request's draws do not depend on which requests were batched beside it or in which order the
// scheduler ran them. Used by the Sampler; thread-safe.
#pragma once

#include <cstdint>

namespace smallmind::worker {

// splitmix64's finaliser (Stafford's "Mix13"): a bijection on 64 bits with full avalanche.
constexpr uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// 64 random bits for draw `index` of stream `seed`. For a fixed seed, distinct indices give
// distinct outputs (Mix64 is a bijection and the counter step is odd).
constexpr uint64_t CounterRandomBits(uint64_t seed, uint64_t index) {
  return Mix64(Mix64(seed ^ 0x5DEECE66Dull) + (index + 1) * 0x9E3779B97F4A7C15ull);
}

// Uniform in [0, 1) with 24 random bits (every value exactly representable).
constexpr float UniformFloat(uint64_t seed, uint64_t index) {
  return static_cast<float>(CounterRandomBits(seed, index) >> 40) * 0x1.0p-24f;
}

// Uniform in [0, 1) with 53 random bits; the sampler uses this one so that probabilities far
// below 2^-24 still get their share.
constexpr double UniformDouble(uint64_t seed, uint64_t index) {
  return static_cast<double>(CounterRandomBits(seed, index) >> 11) * 0x1.0p-53;
}

}  // namespace smallmind::worker
