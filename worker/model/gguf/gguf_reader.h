// GgufFile: a validated, memory-mapped GGUF v2/v3 file: its metadata, its tensor infos, and
// zero-copy views of the tensor data. Loaders open one per model. A malformed file is rejected with
// a Status that names the file and the problem. Immutable after Open(); thread-safe for concurrent
// reads.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/dtype.h"
#include "shared/status.h"
#include "worker/model/gguf/gguf_parser.h"
#include "worker/model/gguf/gguf_value.h"

namespace smallmind::worker {

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
