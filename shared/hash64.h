// 64-bit non-cryptographic hashing: a word mixer, a combiner for hash chains and a streaming hasher
// for large byte ranges (model fingerprints). Used by the KV prefix cache, the KV segment's seals
// and the model fingerprint. Pure functions and a plain-value hasher; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>

namespace smallmind::shared {

// A bijective 64-bit mixer: every input bit affects every output bit (the splitmix64 finalizer's
// xor-shift-multiply rounds and constants).
constexpr uint64_t Mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// Folds `value` into `seed`; order-sensitive, so a sequence of calls hashes a sequence of words.
constexpr uint64_t HashCombine(uint64_t seed, uint64_t value) {
  return Mix64(seed ^ Mix64(value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2)));
}

// Hashes a byte stream fed in pieces of any size; the result depends only on the bytes and their
// order, not on how they were split. Four independent multiply-rotate lanes over 32-byte stripes
// keep it near memory speed (several GB/s on one core).
class StreamHasher {
 public:
  explicit StreamHasher(uint64_t seed = 0);
  void Update(const void* data, size_t bytes);
  void UpdateWord(uint64_t word) { Update(&word, sizeof(word)); }
  // The hash of everything fed so far (the hasher can go on being fed afterwards).
  uint64_t Finish() const;

 private:
  static constexpr size_t kStripe = 32;
  void Stripe(const unsigned char* p);

  uint64_t lanes_[4];
  unsigned char pending_[kStripe];
  size_t pending_bytes_ = 0;
  uint64_t total_bytes_ = 0;
};

}  // namespace smallmind::shared
