#include "shared/hash64.h"

#include <bit>
#include <cstring>

namespace smallmind::shared {
namespace {

constexpr uint64_t kPrime1 = 0x9e3779b185ebca87ULL;  // odd multipliers with well-spread bits
constexpr uint64_t kPrime2 = 0xc2b2ae3d27d4eb4fULL;

uint64_t Load64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

uint64_t Round(uint64_t lane, uint64_t word) {
  return std::rotl(lane + word * kPrime2, 31) * kPrime1;
}

}  // namespace

StreamHasher::StreamHasher(uint64_t seed)
    : lanes_{seed + kPrime1 + kPrime2, seed + kPrime2, seed, seed - kPrime1} {}

void StreamHasher::Stripe(const unsigned char* p) {
  for (int i = 0; i < 4; i++) lanes_[i] = Round(lanes_[i], Load64(p + 8 * i));
}

void StreamHasher::Update(const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  total_bytes_ += bytes;
  if (pending_bytes_ > 0) {
    const size_t take = bytes < kStripe - pending_bytes_ ? bytes : kStripe - pending_bytes_;
    std::memcpy(pending_ + pending_bytes_, p, take);
    pending_bytes_ += take;
    p += take;
    bytes -= take;
    if (pending_bytes_ < kStripe) return;
    Stripe(pending_);
    pending_bytes_ = 0;
  }
  for (; bytes >= kStripe; p += kStripe, bytes -= kStripe) Stripe(p);
  std::memcpy(pending_, p, bytes);
  pending_bytes_ = bytes;
}

uint64_t StreamHasher::Finish() const {
  uint64_t h = std::rotl(lanes_[0], 1) + std::rotl(lanes_[1], 7) + std::rotl(lanes_[2], 12) +
               std::rotl(lanes_[3], 18);
  for (uint64_t lane : lanes_) h = HashCombine(h, lane);
  h = HashCombine(h, total_bytes_);
  size_t i = 0;
  for (; i + 8 <= pending_bytes_; i += 8) h = HashCombine(h, Load64(pending_ + i));
  uint64_t tail = 0;
  std::memcpy(&tail, pending_ + i, pending_bytes_ - i);
  return HashCombine(h, tail);
}

}  // namespace smallmind::shared
