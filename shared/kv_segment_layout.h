// The byte layout of a worker's KV pool in shared memory (one named segment per worker): a header,
// per-block metadata, the token ids of every block and the K/V block data. Written by the worker
// that owns the segment; read back by its successor after a crash (warm restart), which keeps only
// blocks whose seal proves they were complete. Plain data: fixed-width fields, offsets rather than
// pointers (STYLE §18); the functions are pure and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "shared/hash64.h"

namespace smallmind::shared {

inline constexpr uint64_t kKvSegmentMagic = 0x31474553'564B4D53ULL;  // "SMKVSEG1" in memory order
inline constexpr uint32_t kKvSegmentLayoutVersion = 1;

// Element type of the stored K/V rows (the values of kernels::KvType): float, half, or kQ8 (a
// row of kv_dim int8 quants then kv_dim / 32 float scales).
enum class KvDType : uint32_t { kF32 = 1, kF16 = 2, kQ8 = 3 };
// Bytes of one stored row of kv_dim values.
inline constexpr uint64_t KvDTypeRowBytes(uint32_t dtype, uint64_t kv_dim) {
  return dtype == static_cast<uint32_t>(KvDType::kQ8)    ? kv_dim + kv_dim / 8
         : dtype == static_cast<uint32_t>(KvDType::kF16) ? 2 * kv_dim
                                                         : 4 * kv_dim;
}

// What the block data holds; two segments are interchangeable only when these are equal.
struct KvGeometry {
  uint32_t block_size = 0;  // token positions per block
  uint32_t n_layers = 0;
  uint32_t n_kv_heads = 0;
  uint32_t head_dim = 0;
  uint32_t dtype = 0;  // KvDType
  uint32_t block_count = 0;

  uint64_t kv_dim() const { return uint64_t{n_kv_heads} * head_dim; }
  // Bytes of one block: [n_layers][K, V][block_size] rows.
  uint64_t block_bytes() const {
    return 2ull * n_layers * block_size * KvDTypeRowBytes(dtype, kv_dim());
  }
  friend bool operator==(const KvGeometry&, const KvGeometry&) = default;
};

// At offset 0 of the segment.
struct KvSegmentHeader {
  uint64_t magic;              // kKvSegmentMagic
  uint32_t layout_version;     // kKvSegmentLayoutVersion
  uint32_t header_bytes;       // sizeof(KvSegmentHeader)
  uint64_t model_fingerprint;  // of the model whose K/V the blocks hold (worker/model)
  KvGeometry geometry;
  uint32_t owner_pid;  // the process that last took the segment (for messages only)
  uint32_t reserved0;
  uint64_t meta_offset;    // KvBlockMeta[block_count]
  uint64_t tokens_offset;  // int32_t[block_count][block_size]: the token ids of each block
  uint64_t data_offset;    // block data, page aligned: block b at data_offset + b * block_bytes
  uint64_t block_bytes;
  uint64_t total_bytes;   // size of the whole segment
  uint64_t header_seal;   // KvHeaderSeal(*this), written last by the creator; 0 while initialising
  uint8_t reserved[152];  // zero; room for later fields without moving the arrays
};
static_assert(sizeof(KvSegmentHeader) == 256);
static_assert(std::is_trivially_copyable_v<KvSegmentHeader>);
static_assert(std::is_standard_layout_v<KvSegmentHeader>);

// One per block. A block is sealed (complete) when `seal` equals KvBlockSeal of its other fields:
// its K/V rows for every position and its token ids are written and never change until the block
// is reused, and the owner clears `seal` before it writes into the block again.
struct KvBlockMeta {
  uint64_t hash;         // chain hash of the block's tokens and its parent's hash; 0 = none
  uint64_t parent_hash;  // hash of the block before it in its sequence (or the chain's root)
  uint32_t token_count;  // positions holding K/V
  uint32_t ref_count;    // sequences using the block (the owner's view; 0 after a restart)
  uint64_t last_use;     // owner's tick when it was last released: LRU order survives restarts
  uint64_t seal;         // KvBlockSeal(hash, parent_hash, token_count) when complete, else 0
  uint64_t reserved;
};
static_assert(sizeof(KvBlockMeta) == 48);
static_assert(std::is_trivially_copyable_v<KvBlockMeta>);
static_assert(std::is_standard_layout_v<KvBlockMeta>);

// Where everything lives in a segment of `geometry`.
struct KvSegmentLayout {
  uint64_t meta_offset = 0;
  uint64_t tokens_offset = 0;
  uint64_t data_offset = 0;
  uint64_t block_bytes = 0;
  uint64_t total_bytes = 0;
};

inline constexpr uint64_t kKvSegmentDataAlignment = 4096;  // pages: mbind and huge pages apply

constexpr uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

inline KvSegmentLayout ComputeKvSegmentLayout(const KvGeometry& g) {
  KvSegmentLayout l;
  l.meta_offset = sizeof(KvSegmentHeader);
  l.tokens_offset = AlignUp(l.meta_offset + uint64_t{g.block_count} * sizeof(KvBlockMeta), 64);
  const uint64_t tokens_end =
      l.tokens_offset + uint64_t{g.block_count} * g.block_size * sizeof(int32_t);
  l.data_offset = AlignUp(tokens_end, kKvSegmentDataAlignment);
  l.block_bytes = g.block_bytes();
  l.total_bytes = l.data_offset + uint64_t{g.block_count} * l.block_bytes;
  return l;
}

// Never 0, so that 0 always means "not sealed".
inline uint64_t KvBlockSeal(uint64_t hash, uint64_t parent_hash, uint32_t token_count) {
  const uint64_t s =
      HashCombine(HashCombine(HashCombine(0x5EA1ED'B10C'0001ULL, hash), parent_hash), token_count);
  return s == 0 ? 1 : s;
}

// Seal over every header field before header_seal; never 0.
uint64_t KvHeaderSeal(const KvSegmentHeader& h);

// A complete header for `geometry` and `fingerprint`, sealed.
KvSegmentHeader MakeKvSegmentHeader(const KvGeometry& geometry, uint64_t fingerprint,
                                    uint32_t owner_pid);

// Why an existing segment of `segment_bytes` bytes starting with `h` cannot be reused by a worker
// that wants `geometry` and `fingerprint`, in words for a log line ("layout version 0, this worker
// writes 1"); "" when it can. `segment_bytes` below sizeof(KvSegmentHeader) is a reason too.
std::string KvSegmentMismatch(const void* segment, uint64_t segment_bytes,
                              const KvGeometry& geometry, uint64_t fingerprint);

// "16-token blocks x 2 layers x 4 KV heads x 64 dims, f32, 128 blocks".
std::string DescribeKvGeometry(const KvGeometry& g);

}  // namespace smallmind::shared
