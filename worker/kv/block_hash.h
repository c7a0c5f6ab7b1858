// Names of full KV blocks for the prefix cache: a block's hash chains its parent's hash and its
// token ids, so equal hashes mean equal whole prefixes (up to 64-bit collisions, which lookups rule
// out by also comparing the block's tokens). A chain starts from a root that says whose K/V the
// blocks hold (model fingerprint, kernel set, and path when the paths' K/V differ). Pure functions;
// thread-safe.
#pragma once

#include <cstdint>
#include <span>

#include "shared/hash64.h"
#include "worker/types/token_id.h"

namespace smallmind::worker {

// Never 0 (0 means "no hash" in the block metadata).
inline uint64_t KvBlockHash(uint64_t parent_hash, std::span<const TokenId> tokens) {
  uint64_t h = shared::HashCombine(parent_hash, tokens.size());
  for (TokenId t : tokens) h = shared::HashCombine(h, static_cast<uint32_t>(t));
  return h == 0 ? 1 : h;
}

// The parent hash of a sequence's first block. `producer` names the code that writes the K/V
// (kernel set and, when the two paths' K/V are not bitwise equal, the path).
inline uint64_t KvChainRoot(uint64_t model_fingerprint, uint64_t producer) {
  const uint64_t h =
      shared::HashCombine(shared::HashCombine(0x600D'C4A1'0000ULL, model_fingerprint), producer);
  return h == 0 ? 1 : h;
}

}  // namespace smallmind::worker
