// GgufFile: a validated, memory-mapped GGUF v2/v3 file: its metadata, its tensor infos, and
// zero-copy views of the tensor data. Loaders open one per model. A malformed file is rejected with
// a Status that names the file and the problem. Immutable after Open(); thread-safe for concurrent
// reads.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kernels/dtype.h"
#include "shared/status.h"
#include "worker/model/gguf_value.h"

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
// Allocates only in proportion to what the bytes can hold. Defined in gguf_parser.cc.
shared::Result<GgufContents> ParseGguf(std::span<const uint8_t> bytes, const std::string& name);

class GgufFile {
 public:
  // Maps the file read-only and validates it.
  static shared::Result<std::unique_ptr<GgufFile>> Open(const std::string& path);
  // Validates a copy of `bytes` (tests, fuzzing); `name` stands for the path in messages.
  static shared::Result<std::unique_ptr<GgufFile>> FromBuffer(std::span<const uint8_t> bytes,
                                                              std::string name);
  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  const std::string& path() const { return path_; }
  uint32_t version() const { return contents_.version; }
  uint32_t alignment() const { return contents_.alignment; }
  uint64_t file_size() const { return size_; }
  uint64_t data_offset() const { return contents_.data_offset; }
  std::span<const uint8_t> bytes() const { return {data_, static_cast<size_t>(size_)}; }

  std::span<const GgufKeyValue> metadata() const { return contents_.metadata; }
  // nullptr when the key is absent.
  const GgufValue* Find(std::string_view key) const;

  // Typed getters: NotFound when the key is absent; InvalidArgument when its type does not match or
  // its value does not fit. Integer getters accept any integer type whose value fits.
  shared::Result<std::string> GetString(std::string_view key) const;
  shared::Result<uint32_t> GetU32(std::string_view key) const;
  shared::Result<uint64_t> GetU64(std::string_view key) const;
  shared::Result<int64_t> GetInt(std::string_view key) const;
  // FLOAT32, or FLOAT64 rounded to float.
  shared::Result<float> GetF32(std::string_view key) const;
  shared::Result<bool> GetBool(std::string_view key) const;
  shared::Result<std::vector<std::string>> GetStringArray(std::string_view key) const;
  // Elements of FLOAT32 (or FLOAT64, rounded).
  shared::Result<std::vector<float>> GetF32Array(std::string_view key) const;
  // Elements of any integer type whose values fit in int32.
  shared::Result<std::vector<int32_t>> GetI32Array(std::string_view key) const;

  std::span<const GgufTensorInfo> tensors() const { return contents_.tensors; }
  // nullptr when no tensor has that name.
  const GgufTensorInfo* FindTensor(std::string_view name) const;
  // The first byte of t's data inside the mapping: [t.n_bytes] bytes, aligned to alignment()
  // relative to the start of the file (and so in memory, for a mapped file).
  const uint8_t* TensorData(const GgufTensorInfo& t) const {
    return data_ + contents_.data_offset + t.offset;
  }

 private:
  GgufFile() = default;
  shared::Status Parse();
  shared::Result<const GgufValue*> FindTyped(std::string_view key, const char* wanted,
                                             bool (*accepts)(const GgufValue&)) const;
  shared::Status Mismatch(std::string_view key, const GgufValue& v, const char* wanted) const;

  std::string path_;
  const uint8_t* data_ = nullptr;  // [size_] bytes: the mapping or owned_
  uint64_t size_ = 0;
  void* mapping_ = nullptr;  // munmap'ed by the destructor when set
  struct AlignedDelete {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t[], AlignedDelete> owned_;  // FromBuffer's copy, 64-byte aligned
  GgufContents contents_;
};

}  // namespace smallmind::worker
