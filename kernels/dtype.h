// DType: the tensor element types smallmind reads, numbered as in GGUF (ggml_type), with their
// block sizes. Plain constants; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace smallmind::kernels {

// Values are the GGUF/ggml type ids, so a GGUF tensor info maps by value.
enum class DType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kIQ4_NL = 20,
  kIQ4_XS = 23,
  kBF16 = 30,
  kMXFP4 = 39,
};

struct DTypeTraits {
  const char* name;    // "F32", "Q8_0", ...
  int block_elems;     // elements per block (1 for plain floats)
  size_t block_bytes;  // bytes per block
};

// Returns nullptr for a type smallmind does not support.
const DTypeTraits* GetDTypeTraits(uint32_t ggml_type);

// Bytes of a row of `n` elements; n must be a multiple of the block size.
inline size_t RowBytes(const DTypeTraits& t, int64_t n) {
  return static_cast<size_t>(n / t.block_elems) * t.block_bytes;
}

}  // namespace smallmind::kernels
