#include "shared/hash64.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

namespace smallmind::shared {
namespace {

std::vector<unsigned char> RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

TEST(Hash64Test, StreamHashDoesNotDependOnHowTheBytesAreSplit) {
  const auto bytes = RandomBytes(1000, 1);
  StreamHasher whole;
  whole.Update(bytes.data(), bytes.size());
  for (size_t piece : {1, 7, 31, 32, 33, 100}) {
    StreamHasher split;
    for (size_t i = 0; i < bytes.size(); i += piece) {
      split.Update(bytes.data() + i, std::min(piece, bytes.size() - i));
    }
    EXPECT_EQ(split.Finish(), whole.Finish()) << "pieces of " << piece;
  }
}

TEST(Hash64Test, StreamHashChangesWithAnyByteLengthOrSeed) {
  const auto bytes = RandomBytes(257, 2);
  StreamHasher base;
  base.Update(bytes.data(), bytes.size());
  std::set<uint64_t> seen = {base.Finish()};
  for (size_t i = 0; i < bytes.size(); i += 16) {
    auto flipped = bytes;
    flipped[i] ^= 0x10;
    StreamHasher h;
    h.Update(flipped.data(), flipped.size());
    EXPECT_TRUE(seen.insert(h.Finish()).second) << "byte " << i;
  }
  StreamHasher shorter;
  shorter.Update(bytes.data(), bytes.size() - 1);
  EXPECT_TRUE(seen.insert(shorter.Finish()).second);
  StreamHasher seeded(1);
  seeded.Update(bytes.data(), bytes.size());
  EXPECT_TRUE(seen.insert(seeded.Finish()).second);
  // Trailing zeros count: the length is part of the hash.
  const unsigned char zero[2] = {0, 0};
  StreamHasher one_zero, two_zeros;
  one_zero.Update(zero, 1);
  two_zeros.Update(zero, 2);
  EXPECT_NE(one_zero.Finish(), two_zeros.Finish());
}

TEST(Hash64Test, HashCombineIsOrderSensitive) {
  EXPECT_NE(HashCombine(HashCombine(0, 1), 2), HashCombine(HashCombine(0, 2), 1));
  EXPECT_EQ(HashCombine(5, 6), HashCombine(5, 6));
}

}  // namespace
}  // namespace smallmind::shared
