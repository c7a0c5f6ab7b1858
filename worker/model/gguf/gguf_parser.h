// ParseGguf: the bytes of a whole GGUF v2/v3 file -> GgufContents (header, metadata, tensor infos),
// validated so that a later reader can trust every offset and length. Views into the bytes; no I/O.
// Stateless, thread-safe. GgufFile (gguf_reader.h) maps a file and parses it with this.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kernels/dtype.h"
#include "shared/status.h"
#include "worker/model/gguf/gguf_value.h"

namespace smallmind::worker {

inline constexpr int kGgufMaxDims = 4;                 // ggml's GGML_MAX_DIMS
inline constexpr uint32_t kGgufDefaultAlignment = 32;  // when general.alignment is absent
inline constexpr char kGgufAlignmentKey[] = "general.alignment";

struct GgufTensorInfo {
  std::string name;
  kernels::DType type = kernels::DType::kF32;
  int n_dims = 0;
  // dims[0] is the innermost (contiguous) dimension: a row of dims[0] elements; unused dims are 1.
  // A [rows, cols] row-major matrix is stored with dims = {cols, rows}.
  std::array<int64_t, kGgufMaxDims> dims = {1, 1, 1, 1};
  int64_t n_elements = 0;
  uint64_t offset = 0;   // of the data, from the start of the tensor data section (aligned)
  uint64_t n_bytes = 0;  // of the data

  int64_t row_length() const { return dims[0]; }
  int64_t n_rows() const { return n_elements / dims[0]; }
};

struct GgufKeyValue {
  std::string_view key;  // into the file's bytes
  GgufValue value;
};

// Everything the parser reads from the bytes of a file (views into those bytes).
struct GgufContents {
  uint32_t version = 0;
  uint32_t alignment = kGgufDefaultAlignment;
  uint64_t data_offset = 0;  // start of the tensor data section, from the start of the file
  std::vector<GgufKeyValue> metadata;                           // in file order
  std::unordered_map<std::string_view, size_t> metadata_index;  // key -> index in metadata
  std::vector<GgufTensorInfo> tensors;                          // in file order
  std::unordered_map<std::string_view, size_t> tensor_index;    // name -> index in tensors
};

// Parses and validates `bytes` (a whole GGUF file); `name` (the path) prefixes every error message.
// Allocates only in proportion to what the bytes can hold.
shared::Result<GgufContents> ParseGguf(std::span<const uint8_t> bytes, const std::string& name);

}  // namespace smallmind::worker
